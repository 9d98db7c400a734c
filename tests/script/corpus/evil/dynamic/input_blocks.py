# expect: static builtin
# input() blocks the live Blender on its stdin
import bpy
name = input('name? ')
