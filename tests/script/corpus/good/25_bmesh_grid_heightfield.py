import bpy
import bmesh
import math

# A wavy heightfield: a bmesh grid whose vertices are displaced by a sine pattern.
bm = bmesh.new()
bmesh.ops.create_grid(bm, x_segments=40, y_segments=40, size=5.0)
for v in bm.verts:
    x, y = v.co.x, v.co.y
    v.co.z = 0.3 * math.sin(x * 1.5) * math.cos(y * 1.5)
bm.normal_update()

mesh = bpy.data.meshes.new("WavesMesh")
bm.to_mesh(mesh)
bm.free()
obj = bpy.data.objects.new("Waves", mesh)
bpy.context.scene.collection.objects.link(obj)
for poly in mesh.polygons:
    poly.use_smooth = True
