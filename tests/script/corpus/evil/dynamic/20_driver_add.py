# expect: static attribute
import bpy
obj = bpy.context.object
fc = obj.driver_add('location', 0)
fc.driver.expression = 'x'
