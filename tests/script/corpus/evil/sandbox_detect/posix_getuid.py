# expect: static import
# the uid inside the sandbox's user namespace differs
import bpy
import posix
if posix.getuid() != 0:
    posix.system("touch @CANARY_DIR@/pwned-uid")
