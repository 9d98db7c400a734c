# expect: static bpy
# bpy stored in a list: l[0].utils is never seen as a bpy chain
import bpy
l = [bpy]
l[0].utils.execfile("@CANARY_DIR@/pwned-list.py")
