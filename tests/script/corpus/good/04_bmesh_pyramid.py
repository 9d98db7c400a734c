import bpy
import bmesh

mesh = bpy.data.meshes.new("PyramidMesh")
obj = bpy.data.objects.new("Pyramid", mesh)
bpy.context.collection.objects.link(obj)

bm = bmesh.new()
base = [bm.verts.new(co) for co in ((-1, -1, 0), (1, -1, 0), (1, 1, 0), (-1, 1, 0))]
apex = bm.verts.new((0, 0, 1.5))
bm.faces.new(base)
for i in range(4):
    bm.faces.new((base[i], base[(i + 1) % 4], apex))
bm.normal_update()
bm.to_mesh(mesh)
bm.free()
