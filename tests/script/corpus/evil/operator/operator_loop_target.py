# expect: static operator
# an operator bound by a for loop
import bpy
for op in (bpy.ops.object.delete, ):
    op()
