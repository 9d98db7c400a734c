# expect: sandbox rejected
# oversized: a big string inside a nested custom property
import bpy
s = "z" * 600000
bpy.data.materials["bmq_txn_mat"]["bmq_nested"] = {"inner": {"text": s + s}}
