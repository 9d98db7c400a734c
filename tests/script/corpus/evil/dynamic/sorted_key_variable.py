# expect: static call
# key= given a variable holding a bound method
import bpy
kill = bpy.data.objects.remove
sorted(list(bpy.data.objects), key=kill)
