import bpy

# A row of cubes of growing size.
for i in range(5):
    bpy.ops.mesh.primitive_cube_add(size=0.5 + 0.25 * i, location=(i * 2.0, 0, 0))
    cube = bpy.context.active_object
    cube.name = f"Cube_{i}"
