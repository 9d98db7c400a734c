# expect: static rebind
# a comprehension variable named like a module (its own scope, but still a binding)
import bpy
import bmesh
meshes = [bmesh for bmesh in (bpy.context.scene, )]
