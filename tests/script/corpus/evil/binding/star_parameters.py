# expect: static rebind
# *args and **kwargs named like modules
import bpy
import bmesh
def build(*bpy, **bmesh):
    return bpy, bmesh
