import bpy

# A sign: a text object on a board, with an emission material for the letters.
bpy.ops.mesh.primitive_cube_add(size=1, location=(0, 0.06, 1.0))
board = bpy.context.active_object
board.name = "SignBoard"
board.scale = (2.2, 0.05, 0.6)

bpy.ops.object.text_add(location=(-1.8, 0, 0.85), rotation=(1.5708, 0, 0))
text = bpy.context.active_object
text.name = "SignText"
text.data.body = "OPEN"
text.data.extrude = 0.03
text.data.size = 0.5

glow = bpy.data.materials.new(name="Glow")
glow.use_nodes = True
nodes = glow.node_tree.nodes
for node in list(nodes):
    if node.type != "OUTPUT_MATERIAL":
        nodes.remove(node)
emission = nodes.new("ShaderNodeEmission")
emission.inputs["Color"].default_value = (1.0, 0.3, 0.05, 1.0)
emission.inputs["Strength"].default_value = 5.0
output = nodes.get("Material Output")
glow.node_tree.links.new(emission.outputs["Emission"], output.inputs["Surface"])
text.data.materials.append(glow)
