# expect: sandbox rejected
# oversized: a 2 MB scene property made from literal-capped repeats (it made every later
# sandbox run fail with "reply blob too large"); refused when it is made
import bpy
s = "x" * 1000000
s = s + s
bpy.context.scene["bmq_big"] = s
