# expect: static operator
# a positional context override: the operator acts on objects the script chose
import bpy
bpy.ops.object.delete({'selected_objects': list(bpy.data.objects)})
