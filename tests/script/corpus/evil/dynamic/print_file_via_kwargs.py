# expect: static call
# print(file=...) smuggled through **kwargs
import bpy
opts = {'file': bpy.context.scene}
print('import os', **opts)
