# expect: static rebind
# "import mathutils.noise" binds mathutils a second time
import bpy
import mathutils
import mathutils.noise
bpy.ops.mesh.primitive_cube_add(size=1 + mathutils.noise.random())
