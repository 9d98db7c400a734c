import bpy

coll = bpy.data.collections.new("Table")
bpy.context.scene.collection.children.link(coll)


def part(name, dims, loc):
    mesh = bpy.data.meshes.new(name + "Mesh")
    sx, sy, sz = dims
    verts = [(x * sx, y * sy, z * sz) for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)]
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    mesh.from_pydata(verts, [], faces)
    mesh.update()
    obj = bpy.data.objects.new(name, mesh)
    obj.location = loc
    coll.objects.link(obj)
    return obj


top = part("Top", (2.0, 1.0, 0.08), (0, 0, 0.75))
legs = []
for i, (x, y) in enumerate([(-0.9, -0.4), (0.9, -0.4), (-0.9, 0.4), (0.9, 0.4)]):
    leg = part("Leg%d" % i, (0.08, 0.08, 0.71), (x, y, 0.355))
    legs.append(leg)
print("table with", len(legs), "legs")
