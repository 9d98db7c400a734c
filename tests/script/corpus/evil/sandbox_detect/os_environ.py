# expect: static import
# the environment differs (bubblewrap clears it)
import bpy
from os import environ
if 'DISPLAY' in environ:
    bpy.ops.object.delete()
