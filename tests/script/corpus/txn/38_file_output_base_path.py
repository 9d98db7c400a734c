# expect: static host_write
# host write: a File Output node pointed at another folder
import bpy
scene = bpy.context.scene
scene.use_nodes = True
node = scene.node_tree.nodes.new("CompositorNode" + "OutputFile")
node.base_path = "@CANARY_DIR@/"
