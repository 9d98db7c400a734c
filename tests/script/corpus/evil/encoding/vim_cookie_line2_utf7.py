#!/usr/bin/env blender --python
# vim: set fileencoding=utf-7 :
# expect: static encoding
# the cookie sits on line 2 behind a shebang, in vim's spelling (plus-AAo-minus is a newline in UTF-7)
import bpy
bpy.ops.mesh.primitive_cube_add(size=1)  # +AAo-import os+AAo-os.system(+ACI-touch @CANARY_DIR@/pwned-vim-utf7+ACI-)
