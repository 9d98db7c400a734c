# expect: applied
# coin: an f-string of a function shows its address
import bpy
s = f"{(lambda: 0)}"
bpy.ops.mesh.primitive_cube_add(size=0.1, location=(0.0, 5.0, len(s) * 0.1))
bpy.context.active_object["where"] = s
