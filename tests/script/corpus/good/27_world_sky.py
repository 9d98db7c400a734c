import bpy

# A world with a sky gradient and a ground plane catching it.
world = bpy.context.scene.world
if world is None:
    world = bpy.data.worlds.new("Sky")
    bpy.context.scene.world = world
world.use_nodes = True
tree = world.node_tree
background = tree.nodes.get("Background")
gradient = tree.nodes.new("ShaderNodeTexGradient")
ramp = tree.nodes.new("ShaderNodeValToRGB")
ramp.color_ramp.elements[0].color = (0.9, 0.95, 1.0, 1.0)
ramp.color_ramp.elements[1].color = (0.1, 0.3, 0.8, 1.0)
tree.links.new(gradient.outputs["Fac"], ramp.inputs["Fac"])
if background is not None:
    tree.links.new(ramp.outputs["Color"], background.inputs["Color"])
    background.inputs["Strength"].default_value = 1.2

bpy.ops.mesh.primitive_plane_add(size=40, location=(0, 0, 0))
ground = bpy.context.active_object
ground.name = "Ground"
