# expect: applied
# diff: LIGHT:
# blind diff: a light's data
import bpy
light = bpy.data.objects["bmq_txn_light"].data
light.energy = 1234.0
light.color = (0.1, 0.2, 0.9)
