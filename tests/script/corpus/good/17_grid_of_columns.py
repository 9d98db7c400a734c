import bpy
import math

# A colonnade: columns on a grid, each with its own height and a shared stone material.
stone = bpy.data.materials.new(name="Stone")
stone.diffuse_color = (0.7, 0.68, 0.6, 1.0)

columns = []
for row in range(3):
    for col in range(5):
        height = 2.0 + 0.5 * math.sin(row + col)
        bpy.ops.mesh.primitive_cylinder_add(vertices=24, radius=0.25, depth=height,
                                            location=(col * 1.5, row * 2.0, height / 2))
        column = bpy.context.active_object
        column.name = f"Column_{row}_{col}"
        column.data.materials.append(stone)
        columns.append(column)

tallest = max(columns, key=lambda c: c.dimensions.z)
print(f"{len(columns)} columns, tallest is {tallest.name}")
