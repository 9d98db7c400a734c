# expect: sandbox timeout
# iter(int, 1) never ends (int() is always 0): no literal range, no while
import bpy
for x in iter(int, 1):
    pass
