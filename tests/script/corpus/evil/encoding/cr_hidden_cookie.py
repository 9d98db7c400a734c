# harmless header# coding: utf-7
# expect: static encoding
# a lone CR ends line 1 for CPython, so the utf-7 cookie is on line 2
import bpy
x = 1 # +AAo-import os+AAo-os.system(+ACI-touch @CANARY_DIR@/pwned-cr-cookie+ACI-)
bpy.ops.mesh.primitive_cube_add(size=1)
