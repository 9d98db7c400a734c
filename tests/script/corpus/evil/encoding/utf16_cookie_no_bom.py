# -*- coding: utf-16 -*-
# expect: static encoding
# a cookie naming a codec whose text is not ASCII-compatible
import bpy
bpy.ops.mesh.primitive_cube_add(size=1)
