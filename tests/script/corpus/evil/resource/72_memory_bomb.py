# expect: sandbox error
import bpy
n = 10
big = [0] * (n ** n)
