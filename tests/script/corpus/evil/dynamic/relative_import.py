# expect: static import
# a relative import reaches the add-on package Blender runs the script inside
import bpy
from . import helpers
