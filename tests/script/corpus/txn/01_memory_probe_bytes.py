# expect: applied
# coin: memory. bytes(6 GiB) was a MemoryError under the sandbox's RLIMIT_AS and a success live;
# the size guard refuses it in both (ValueError), so the branch cannot differ.
# (MemoryError itself is not a builtin scripts get: any exception is the probe.)
import bpy
try:
    big = bytes(6 << 30)
    fits = True
except Exception:
    fits = False
if fits:
    for o in list(bpy.data.objects):
        bpy.data.objects.remove(o)
