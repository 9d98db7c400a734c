# expect: static operator
import bpy
bpy.ops.object.load_reference_image(filepath='/etc/passwd')
