# expect: sandbox timeout
# a power the literal check cannot see: ten to the hundred millionth
import bpy
n = 10
x = n ** (n ** 8)
