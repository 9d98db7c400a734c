# expect: static builtin
# breakpoint() imports and calls whatever PYTHONBREAKPOINT names
import bpy
breakpoint()
