# expect: static rebind
# a starred assignment target
import bpy
import bmesh
*bmesh, = [bpy.context.scene]
