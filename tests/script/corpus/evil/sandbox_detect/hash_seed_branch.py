# expect: static builtin
# str hashes are salted per process (PYTHONHASHSEED): a free sandbox-versus-live coin
# (hash() and id() are not allowed builtins any more: salted per process, they were free coins)
import bpy
if hash('blendmq') % 2:
    bpy.ops.mesh.primitive_cone_add(radius1=0.5, location=(2, 0, 5))
else:
    bpy.ops.mesh.primitive_cylinder_add(radius=0.5, location=(2, 0, 5))
bpy.context.active_object.name = 'detect_hash'
