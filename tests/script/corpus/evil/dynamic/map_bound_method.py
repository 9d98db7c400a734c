# expect: static call
# a bound method handed to map(): removes every object of the live scene
import bpy
list(map(bpy.data.objects.remove, list(bpy.data.objects)))
