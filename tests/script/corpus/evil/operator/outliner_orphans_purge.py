# expect: static operator
# a category outside the allowlist that destroys live data
import bpy
bpy.ops.outliner.orphans_purge(do_recursive=True)
