# expect: applied
# diff: OBJECT:bmq_txn_cube
# the scene the blind-diff scripts below change: a cube with a material, a world, a light
import bpy
bpy.ops.mesh.primitive_cube_add(size=1.0, location=(0.0, 0.0, 0.0))
cube = bpy.context.active_object
cube.name = "bmq_txn_cube"
mat = bpy.data.materials.new("bmq_txn_mat")
mat.diffuse_color = (0.2, 0.5, 0.2, 1.0)
cube.data.materials.append(mat)
world = bpy.data.worlds.new("bmq_txn_world")
bpy.context.scene.world = world
bpy.ops.object.light_add(type="POINT", location=(2.0, 2.0, 3.0))
bpy.context.active_object.name = "bmq_txn_light"
