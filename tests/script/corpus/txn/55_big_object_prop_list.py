# expect: sandbox rejected
# oversized: a custom property holding 300,000 numbers
import bpy
cube = bpy.data.objects["bmq_txn_cube"]
cube["bmq_numbers"] = [0.5] * 300000
