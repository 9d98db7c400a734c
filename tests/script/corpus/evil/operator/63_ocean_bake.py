# expect: static operator
import bpy
bpy.ops.object.ocean_bake(free=False)
