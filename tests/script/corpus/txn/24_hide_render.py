# expect: applied
# diff: OBJECT:bmq_txn_light
# blind diff: visibility flags
import bpy
bpy.data.objects["bmq_txn_light"].hide_render = True
