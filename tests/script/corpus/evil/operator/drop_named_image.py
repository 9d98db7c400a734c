# expect: static operator
# a denied operator with a hidden file path parameter
import bpy
bpy.ops.object.drop_named_image(filepath='/etc/passwd')
