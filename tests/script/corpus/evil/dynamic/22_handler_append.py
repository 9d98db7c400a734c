# expect: static bpy
import bpy
bpy.app.handlers.depsgraph_update_post.append(print)
