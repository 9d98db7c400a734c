# expect: static rebind
# a module name reassigned: later "mathutils.X" chains are really scene attributes
import bpy
import mathutils
mathutils = bpy.context.scene
mathutils.render.use_lock_interface = True
