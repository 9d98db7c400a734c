# expect: applied
# diff: WORLD:bmq_txn_world
# blind diff: the world's colour
import bpy
w = bpy.context.scene.world
w.color = (0.9, 0.1, 0.1)
