# expect: static bpy
import bpy
with bpy.data.libraries.load('/etc/passwd') as (src, dst):
    pass
