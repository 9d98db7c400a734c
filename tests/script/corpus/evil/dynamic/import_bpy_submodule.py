# expect: static import
# bpy.utils through "import bpy.utils as u"
import bpy.utils as u
u.execfile("@CANARY_DIR@/pwned-submodule.py")
