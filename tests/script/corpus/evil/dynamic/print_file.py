# expect: static call
# print(file=X) calls X.write(...): any object with a write method becomes a sink
import bpy
print('import os', file=bpy.context.scene)
