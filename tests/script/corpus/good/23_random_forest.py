import bpy
import random

# A low-poly forest: cones on cylinders at seeded random positions, with two materials.
random.seed(42)
bark = bpy.data.materials.new(name="Bark")
bark.diffuse_color = (0.35, 0.2, 0.1, 1.0)
leaves = bpy.data.materials.new(name="Leaves")
leaves.diffuse_color = (0.1, 0.45, 0.15, 1.0)


def tree(x, y, height):
    bpy.ops.mesh.primitive_cylinder_add(vertices=8, radius=0.12, depth=height * 0.4,
                                        location=(x, y, height * 0.2))
    trunk = bpy.context.active_object
    trunk.data.materials.append(bark)
    bpy.ops.mesh.primitive_cone_add(vertices=10, radius1=height * 0.3, depth=height * 0.8,
                                    location=(x, y, height * 0.8))
    crown = bpy.context.active_object
    crown.data.materials.append(leaves)
    crown.parent = trunk
    crown.matrix_parent_inverse = trunk.matrix_world.inverted()
    return trunk


trees = []
for i in range(25):
    trees.append(tree(random.uniform(-10, 10), random.uniform(-10, 10), random.uniform(1.5, 3.5)))
print("trees:", len(trees))
