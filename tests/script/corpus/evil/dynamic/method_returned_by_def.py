# expect: static attribute
# a bound method returned by a def and stored under a method name on a function
import bpy
def grab():
    return bpy.context.active_object.user_remap
def holder():
    pass
holder.get = grab()
holder.get(None)
