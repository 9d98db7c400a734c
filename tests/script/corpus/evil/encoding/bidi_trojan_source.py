# expect: static import
# Trojan Source (CVE-2021-42574): bidi controls make the import look like part of a string
import bpy
label = "cube‮ ⁦" ; import os ; "⁩⁦"
bpy.ops.mesh.primitive_cube_add(size=1)
