# expect: static attribute
# random.Random is a Python class: its instances take any attribute
import bpy
import random
rng = random.Random(1)
rng.update = bpy.context.active_object.user_remap
rng.update(None)
