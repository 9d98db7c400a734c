# expect: static attribute
# GPU devices differ between the sandbox and the workstation
import bpy
if bpy.context.preferences.addons['cycles'].preferences.compute_device_type != 'NONE':
    bpy.ops.object.delete()
