# expect: static call
# recursion through a lambda that calls its parameter
import bpy
loop = lambda f: f(f)
loop(loop)
