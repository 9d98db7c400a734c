# expect: sandbox timeout
# looks bounded: 0.1 added ten times is not 1.0
import bpy
x = 0.0
while x != 1.0:
    x += 0.1
