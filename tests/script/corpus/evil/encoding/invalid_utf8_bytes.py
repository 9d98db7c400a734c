# expect: static encoding
# bytes that are not UTF-8 (a lone 0xff): no lossy or second decoding may rescue them
import bpy
label = 'abÿcd'
bpy.ops.mesh.primitive_cube_add(size=1)
