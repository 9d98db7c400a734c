# expect: static bpy
import bpy
bpy = None
