# coding: latin-1
# expect: static encoding
# a UTF-8 BOM (stripped) followed by a cookie for another codec
import bpy
label = 'é'
bpy.ops.mesh.primitive_cube_add(size=1)
