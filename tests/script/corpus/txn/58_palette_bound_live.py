# expect: live refused
# an operator integer above the palette's bound (primitive_grid_add: x_subdivisions at most 500):
# the validator's literal cap is wider (4096) and the sandbox has no palette; live refuses it
# before the operator runs (ValueError), and the transaction rolls back
import bpy
bpy.ops.mesh.primitive_grid_add(x_subdivisions=1200, y_subdivisions=4, location=(0.0, 9.0, 0.0))
