# expect: applied
# coin: str() of an RNA struct shows the address of Blender's data
import bpy
cube = bpy.data.objects["bmq_txn_cube"]
s = str(cube.data.vertices[0])
cube["vertex"] = s
