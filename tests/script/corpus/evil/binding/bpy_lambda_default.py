# expect: static bpy
# bpy captured as a lambda default
import bpy
grab = lambda b=bpy: b.utils
grab().execfile("@CANARY_DIR@/pwned-lambda.py")
