# expect: static rebind
# a function swaps a def'd helper for another callable through global
import bpy
def place(obj):
    obj.location = (0, 0, 1)
def hijack():
    global place
    place = print
hijack()
place(bpy.context.scene)
