# expect: static bpy
import bpy
bpy.msgbus.subscribe_rna(key=(), owner=1, args=(), notify=print)
