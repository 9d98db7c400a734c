import bpy

# A crate: a cube unwrapped in edit mode, with a checker texture material.
bpy.ops.mesh.primitive_cube_add(size=1.0, location=(0, 0, 0.5))
crate = bpy.context.active_object
crate.name = "Crate"
bpy.ops.object.mode_set(mode="EDIT")
bpy.ops.mesh.select_all(action="SELECT")
bpy.ops.uv.cube_project(cube_size=1.0)
bpy.ops.object.mode_set(mode="OBJECT")

mat = bpy.data.materials.new(name="CrateChecker")
mat.use_nodes = True
nodes = mat.node_tree.nodes
checker = nodes.new("ShaderNodeTexChecker")
checker.inputs["Scale"].default_value = 4.0
checker.inputs["Color1"].default_value = (0.45, 0.3, 0.15, 1.0)
checker.inputs["Color2"].default_value = (0.3, 0.2, 0.1, 1.0)
bsdf = nodes.get("Principled BSDF")
mat.node_tree.links.new(checker.outputs["Color"], bsdf.inputs["Base Color"])
crate.data.materials.append(mat)
print("uv layers:", [uv.name for uv in crate.data.uv_layers])
