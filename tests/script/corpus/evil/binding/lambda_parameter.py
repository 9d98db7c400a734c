# expect: static rebind
# a lambda parameter shadows the random module
import bpy
import random
pick = lambda random: random.choice([1, 2])
bpy.ops.mesh.primitive_cube_add(size=pick(bpy.context.scene))
