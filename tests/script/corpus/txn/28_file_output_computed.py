# expect: sandbox rejected
# host write: the node type put together at run time (the static check cannot see it; the
# check after the run, the same in the sandbox and live, finds the node)
import bpy
scene = bpy.context.scene
scene.use_nodes = True
kind = "CompositorNode" + "Output" + "File"
scene.node_tree.nodes.new(kind)
