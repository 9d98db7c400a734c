# expect: applied
# coin: repr(lambda) shows an address, different in every process
import bpy
s = repr(lambda: 0)
bpy.ops.mesh.primitive_cube_add(size=0.1, location=(len(s) * 0.1, 5.0, 0.0))
bpy.context.active_object.name = "bmq_" + s[-12:]
