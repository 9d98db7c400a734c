# expect: static class
import bpy
class Evil(bpy.types.Operator):
    bl_idname = 'evil.op'
bpy.utils.register_class(Evil)
