# expect: applied
# diff: SCENE:
# blind diff: the compositor switched on (its default nodes: no file output)
import bpy
bpy.context.scene.use_nodes = True
