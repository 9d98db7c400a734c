# expect: static rebind
# a for loop rebinds the imported name to something else
import bpy
from bpy import data
for data in (bpy.context.scene, ):
    data.frame_current = 1
