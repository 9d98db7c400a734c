# expect: static limit
import bpy
bpy.ops.mesh.primitive_circle_add(vertices=10000000)
