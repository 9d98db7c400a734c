# expect: static operator
# a denied operator of an allowed category that writes a file
import bpy
bpy.ops.object.multires_external_save(filepath="@CANARY_DIR@/pwned-multires.btx")
