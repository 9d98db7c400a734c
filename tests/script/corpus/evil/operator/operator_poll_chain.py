# expect: static operator
# attributes of an operator function (poll, get_rna_type, idname ...)
import bpy
if bpy.ops.mesh.primitive_cube_add.poll():
    pass
