# expect: static bpy
import bpy
bpy.types.Object.evil = 1
