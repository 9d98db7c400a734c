# expect: static operator
# an operator captured as a parameter default
import bpy
def clean(op=bpy.ops.object.delete):
    op()
clean()
