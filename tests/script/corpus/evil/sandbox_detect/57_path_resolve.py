# expect: static attribute
import bpy
p = bpy.context.scene.path_resolve('render.filepath')
