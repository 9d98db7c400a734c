import bpy

# A glossy material built from nodes: a color ramp driven by a noise texture.
bpy.ops.mesh.primitive_uv_sphere_add(segments=48, ring_count=24, radius=1.0, location=(0, 0, 1))
sphere = bpy.context.active_object
sphere.name = "NoiseSphere"
bpy.ops.object.shade_smooth()

mat = bpy.data.materials.new(name="NoiseMaterial")
mat.use_nodes = True
nodes = mat.node_tree.nodes
links = mat.node_tree.links
bsdf = nodes.get("Principled BSDF")

noise = nodes.new(type="ShaderNodeTexNoise")
noise.location = (-600, 0)
noise.inputs["Scale"].default_value = 6.0
noise.inputs["Detail"].default_value = 4.0

ramp = nodes.new(type="ShaderNodeValToRGB")
ramp.location = (-300, 0)
ramp.color_ramp.elements[0].color = (0.05, 0.1, 0.4, 1.0)
ramp.color_ramp.elements[1].color = (0.9, 0.6, 0.1, 1.0)

links.new(noise.outputs["Fac"], ramp.inputs["Fac"])
links.new(ramp.outputs["Color"], bsdf.inputs["Base Color"])
bsdf.inputs["Roughness"].default_value = 0.25
sphere.data.materials.append(mat)
