# expect: applied
# coin: memory, through a repeat computed at run time.
import bpy
n = int("2147483648")
try:
    big = [0] * n
    fits = True
except Exception:
    fits = False
if fits:
    for o in list(bpy.data.objects):
        bpy.data.objects.remove(o)
