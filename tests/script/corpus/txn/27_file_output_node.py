# expect: static host_write
# host write: a compositor File Output node writes /tmp/Image0001.png at every render
import bpy
scene = bpy.context.scene
scene.use_nodes = True
scene.node_tree.nodes.new("CompositorNodeOutputFile")
