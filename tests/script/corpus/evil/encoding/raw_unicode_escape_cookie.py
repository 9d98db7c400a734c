# coding: raw_unicode_escape
# expect: static encoding
# under raw_unicode_escape a backslash-u000a escape inside a comment becomes a real newline
import bpy
bpy.ops.mesh.primitive_cube_add(size=1)  # tidy up \u000aimport os\u000aos.system('touch @CANARY_DIR@/pwned-raw-escape')
