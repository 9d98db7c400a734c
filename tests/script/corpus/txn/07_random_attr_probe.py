# expect: applied
# persistence: the attribute the previous script set, if it is still there, deletes the scene
import bpy
import random
try:
    flag = random.Random.bmq_flag
except AttributeError:
    flag = 0
if flag:
    for o in list(bpy.data.objects):
        bpy.data.objects.remove(o)
else:
    bpy.ops.mesh.primitive_cube_add(size=0.2, location=(0.0, -3.0, 0.0))
