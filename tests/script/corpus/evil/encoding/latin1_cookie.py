# -*- coding: latin-1 -*-
# expect: static encoding
# a Latin-1 file: the validator decodes UTF-8 only, never the declared codec
import bpy
label = 'café'
bpy.ops.mesh.primitive_cube_add(size=1)
