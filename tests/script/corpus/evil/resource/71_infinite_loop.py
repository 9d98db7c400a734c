# expect: sandbox timeout
import bpy
while True:
    pass
