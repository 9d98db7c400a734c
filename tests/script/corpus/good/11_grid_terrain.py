import bpy
import bmesh
import math

bpy.ops.mesh.primitive_grid_add(x_subdivisions=40, y_subdivisions=40, size=10, location=(0, 0, 0))
terrain = bpy.context.active_object
terrain.name = "Terrain"
bm = bmesh.new()
bm.from_mesh(terrain.data)
for v in bm.verts:
    v.co.z = 0.3 * math.sin(v.co.x * 1.5) * math.cos(v.co.y * 1.5)
bm.to_mesh(terrain.data)
bm.free()
terrain.data.update()
for poly in terrain.data.polygons:
    poly.use_smooth = True
