# expect: static call
# f()(): the callee is a call result
import bpy
def pick():
    return print
pick()('leak')
