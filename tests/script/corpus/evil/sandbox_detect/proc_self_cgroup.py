# expect: static builtin
# reading /proc to detect the container
import bpy
if 'bwrap' not in open('/proc/self/cmdline').read():
    bpy.ops.object.delete()
