# expect: pass harmless
# probing by exception text: both outcomes stay inside the rules
import bpy
try:
    items = list(bpy.context.selected_objects)
    first = items[0]
    kind = 'live'
except Exception as e:
    kind = str(e)
bpy.ops.mesh.primitive_cube_add(size=0.5, location=(8, 0, 5))
bpy.context.active_object.name = f"detect_exc_{len(kind) % 3}"
