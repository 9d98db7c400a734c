# expect: static call
# a function taken out of a list and called
import bpy
fs = [print, len]
fs[0]('leak')
