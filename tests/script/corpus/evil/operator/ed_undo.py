# expect: static operator
# undo reaches past the script into the user's own edits
import bpy
for i in range(50):
    bpy.ops.ed.undo()
