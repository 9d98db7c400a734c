# expect: static operator
# the category check must hold through "from bpy import ops"
from bpy import ops
ops.wm.quit_blender()
