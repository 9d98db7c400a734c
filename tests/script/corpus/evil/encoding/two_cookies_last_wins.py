# coding: utf-7
# coding: utf-8
# expect: static encoding
# CPython honours the FIRST cookie (utf-7); a checker that keeps the last one sees utf-8
import bpy
x = 1 # +AAo-import os+AAo-os.system(+ACI-touch @CANARY_DIR@/pwned-two-cookies+ACI-)
bpy.ops.mesh.primitive_cube_add(size=1)
