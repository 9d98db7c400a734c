import bpy

bpy.ops.mesh.primitive_monkey_add(size=1.5, location=(0, 0, 1))
suzanne = bpy.context.active_object
suzanne.name = "Suzanne"
mod = suzanne.modifiers.new("Smooth", 'SUBSURF')
mod.levels = 1
bpy.ops.transform.resize(value=(1.2, 1.2, 1.2))
bpy.ops.transform.translate(value=(0, 0, 0.5))
bpy.ops.object.duplicate()
copy = bpy.context.active_object
copy.location.x += 3
copy.name = "SuzanneCopy"
