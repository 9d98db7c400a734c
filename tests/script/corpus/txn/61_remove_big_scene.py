# expect: applied
# heavy: a 99 MB scene (snapshots, commits and fingerprints of 750,000 faces)
# the big grids removed again (objects and their meshes)
import bpy
for o in list(bpy.data.objects):
    if o.name.startswith("Grid"):
        mesh = o.data
        bpy.data.objects.remove(o)
        bpy.data.meshes.remove(mesh)
