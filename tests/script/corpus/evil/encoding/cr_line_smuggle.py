# expect: static import
# a lone CR ends a line for CPython: a line-based reader thinks the import is part of the comment
import bpy
bpy.ops.mesh.primitive_cube_add(size=1)  # doneimport osos.system('touch @CANARY_DIR@/pwned-cr-smuggle')
