import bpy

# A boat hull: half a mesh made from data, mirrored by a modifier and smoothed.
verts = [(0, -2, 0.5), (0.8, -1.2, 0.5), (1.0, 0.5, 0.5), (0.6, 2, 0.6), (0, 2.2, 0.7),
         (0, -1.8, 0), (0.5, -1, 0), (0.6, 0.5, 0), (0.3, 1.8, 0.2), (0, 2, 0.3)]
faces = [(0, 1, 6, 5), (1, 2, 7, 6), (2, 3, 8, 7), (3, 4, 9, 8)]
mesh = bpy.data.meshes.new("HullMesh")
mesh.from_pydata(verts, [], faces)
mesh.update()
hull = bpy.data.objects.new("Hull", mesh)
bpy.context.scene.collection.objects.link(hull)

mirror = hull.modifiers.new(name="Mirror", type="MIRROR")
mirror.use_axis[0] = True
mirror.use_clip = True
subsurf = hull.modifiers.new(name="Smooth", type="SUBSURF")
subsurf.levels = 2
hull.select_set(True)
bpy.context.view_layer.objects.active = hull
bpy.ops.object.shade_smooth()
