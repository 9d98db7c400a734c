# expect: static decorator
import bpy
@bpy.app.handlers.persistent
def hook(scene):
    pass
