import bpy
import random

# Cubes with a random shade each, through an object color and per-object materials.
random.seed(3)
palette = [(random.random(), random.random(), random.random(), 1.0) for i in range(8)]
for i, color in enumerate(palette):
    angle_index = i % 4
    bpy.ops.mesh.primitive_cube_add(size=0.8, location=(i % 4 * 1.2, i // 4 * 1.2, 0.4))
    cube = bpy.context.active_object
    cube.name = f"Swatch{i}"
    cube.color = color
    mat = bpy.data.materials.new(name=f"Swatch{i}Mat")
    mat.diffuse_color = color
    mat.metallic = 0.1 * angle_index
    mat.roughness = 0.5
    cube.data.materials.append(mat)
