# expect: sandbox rejected
# host write: a File Output node hidden in a compositor node group
import bpy
group = bpy.data.node_groups.new("bmq_group", "CompositorNodeTree")
parts = ["Compositor", "Node", "Output", "File"]
group.nodes.new("".join(parts))
