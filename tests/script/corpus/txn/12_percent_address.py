# expect: applied
# coin: printf-style formatting of a function shows its address
import bpy
s = "%s" % (lambda: 0,)
bpy.ops.mesh.primitive_cube_add(size=0.1, location=(1.0, 5.0, 0.0))
bpy.context.active_object["where"] = s
