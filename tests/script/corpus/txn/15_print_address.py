# expect: applied
# coin: print() of a function shows its address; the output differs, the scene does not
import bpy
print(lambda: 0)
bpy.data.objects["bmq_txn_cube"]["printed"] = 1
