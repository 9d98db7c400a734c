# coding: utf-7
# expect: static encoding
# CPython's cookie pattern allows a form feed before the '#'
import bpy
x = 1 # +AAo-import os+AAo-os.system(+ACI-touch @CANARY_DIR@/pwned-formfeed+ACI-)
bpy.ops.mesh.primitive_cube_add(size=1)
