# expect: static host_write
# host write: a dynamic paint canvas writes image sequences when baked
import bpy
bpy.ops.object.modifier_add(type="DYNAMIC_PAINT")
