# expect: static limit
# keyword names are identifiers too: ｖｅｒｔｉｃｅｓ is 'vertices'
import bpy
bpy.ops.mesh.primitive_circle_add(ｖｅｒｔｉｃｅｓ=10000000)
