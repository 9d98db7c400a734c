# expect: pass harmless
# selection and the active object may differ in the copied scene
import bpy
if bpy.context.active_object is None or len(bpy.context.selected_objects) == 0:
    bpy.ops.mesh.primitive_plane_add(size=1, location=(6, 0, 5))
else:
    bpy.ops.mesh.primitive_monkey_add(size=0.5, location=(6, 0, 5))
bpy.context.active_object.name = 'detect_selection'
