# expect: static attribute
# a def'd function has an instance dict: park a non-allowlisted bound method under an
# allowlisted method name, then call it as a "method"
import bpy
def holder():
    pass
holder.new = bpy.context.active_object.user_remap
holder.new(None)
