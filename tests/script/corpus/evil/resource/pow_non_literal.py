# expect: sandbox error
# a power the literal check cannot see: ten to the hundred millionth (the run-time size guard refuses it at once: issue 23)
import bpy
n = 10
x = n ** (n ** 8)
