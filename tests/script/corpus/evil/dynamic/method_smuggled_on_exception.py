# expect: static attribute
# exception instances have an instance dict too: .link looks like collection.link()
import bpy
box = ValueError("box")
box.link = bpy.context.active_object.user_remap
box.link(None)
