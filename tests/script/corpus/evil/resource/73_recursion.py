# expect: sandbox error
import bpy
def f(n):
    return f(n + 1)
f(0)
