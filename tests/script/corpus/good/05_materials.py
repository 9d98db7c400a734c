import bpy

colors = {"Red": (0.8, 0.1, 0.1, 1.0), "Green": (0.1, 0.7, 0.2, 1.0), "Blue": (0.1, 0.2, 0.8, 1.0)}
for i, (name, rgba) in enumerate(colors.items()):
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=3, radius=0.6, location=(i * 1.5, 0, 0.6))
    obj = bpy.context.active_object
    obj.name = name + "Ball"
    mat = bpy.data.materials.new(name=name + "Mat")
    mat.diffuse_color = rgba
    mat.use_nodes = True
    bsdf = mat.node_tree.nodes.get("Principled BSDF")
    if bsdf is not None:
        bsdf.inputs["Base Color"].default_value = rgba
        bsdf.inputs["Roughness"].default_value = 0.4
    obj.data.materials.append(mat)
