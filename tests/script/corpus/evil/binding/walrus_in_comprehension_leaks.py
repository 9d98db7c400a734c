# expect: static rebind
# := inside a comprehension binds in the ENCLOSING scope: ops becomes bpy.context
import bpy
from bpy import ops
found = [(ops := c) for c in [bpy.context]]
ops.object.shape_key_add(from_mix=False)
