# expect: sandbox error
# a small literal range, an exponential string
import bpy
s = 'x'
for i in range(64):
    s = s + s
