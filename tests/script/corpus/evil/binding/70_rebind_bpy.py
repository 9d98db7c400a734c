# expect: static rebind
import bpy
bpy = None
