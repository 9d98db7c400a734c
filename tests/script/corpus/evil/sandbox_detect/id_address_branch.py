# expect: static builtin
# object addresses differ between processes
# (hash() and id() are not allowed builtins any more: salted per process, they were free coins)
import bpy
if id(bpy.context.scene) % 64 == 0:
    bpy.ops.mesh.primitive_torus_add(location=(4, 0, 5))
else:
    bpy.ops.mesh.primitive_ico_sphere_add(radius=0.5, location=(4, 0, 5))
bpy.context.active_object.name = 'detect_id'
