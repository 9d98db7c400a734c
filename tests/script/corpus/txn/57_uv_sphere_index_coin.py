# expect: applied
# diff: MESH:Sphere
# coin: Blender 3.4.1 orders a new UV sphere's faces differently in every process (its poles
# are merged through a pointer-keyed map); a script indexing them placed things differently in
# the sandbox and live. The run-time guard puts the new mesh in one canonical order.
import bpy
bpy.ops.mesh.primitive_uv_sphere_add(radius=0.5, location=(0.0, -6.0, 0.0))
sphere = bpy.context.active_object
c = sphere.data.polygons[7].center
bpy.ops.mesh.primitive_cube_add(size=0.1, location=(c.x, c.y - 6.0, c.z))
