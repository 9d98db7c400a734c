# expect: static attribute
# linked libraries are paths too
import bpy
for obj in bpy.data.objects:
    if obj.library:
        bpy.ops.object.delete()
