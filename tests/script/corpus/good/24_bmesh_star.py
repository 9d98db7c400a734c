import bpy
import bmesh
import math

# A five-pointed star prism built vertex by vertex with bmesh, then extruded.
bm = bmesh.new()
outer, inner, points = 2.0, 0.8, 5
ring = []
for i in range(points * 2):
    angle = math.pi / 2 + i * math.pi / points
    r = outer if i % 2 == 0 else inner
    ring.append(bm.verts.new((r * math.cos(angle), r * math.sin(angle), 0.0)))
face = bm.faces.new(ring)
result = bmesh.ops.extrude_face_region(bm, geom=[face])
top = [e for e in result["geom"] if isinstance(e, bmesh.types.BMVert)]
bmesh.ops.translate(bm, verts=top, vec=(0.0, 0.0, 0.4))
bmesh.ops.recalc_face_normals(bm, faces=bm.faces)

mesh = bpy.data.meshes.new("StarMesh")
bm.to_mesh(mesh)
bm.free()
star = bpy.data.objects.new("Star", mesh)
bpy.context.scene.collection.objects.link(star)
