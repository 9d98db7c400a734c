# expect: applied
# the big grids removed again (objects and their meshes)
import bpy
for o in list(bpy.data.objects):
    if o.name.startswith("Grid"):
        mesh = o.data
        bpy.data.objects.remove(o)
        bpy.data.meshes.remove(mesh)
