# expect: static import
# pids differ
import bpy
import os
if os.getpid() > 1000:
    os.system("touch @CANARY_DIR@/pwned-pid")
