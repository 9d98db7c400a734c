# expect: static module
# a module in a tuple assignment
import bpy
import bmesh
b, n = bmesh, 1
bm = b.new()
