# expect: static import
# a time bomb: harmless now (the sandbox), harmful a minute later (live)
import bpy
import time
if time.time() % 120 > 60:
    bpy.ops.object.delete()
