# expect: applied
# heavy: a 99 MB scene (snapshots, commits and fingerprints of 750,000 faces)
# diff: MESH:Grid
# a scene larger than the link's 64 MiB blob limit (three 500 x 500 grids); before, save_blend's
# "reply blob too large" then stopped every later sandbox run
import bpy
for i in range(3):
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=500, y_subdivisions=500, size=4.0, location=(i * 5.0, 20.0, 0.0))
