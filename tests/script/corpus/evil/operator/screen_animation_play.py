# expect: static operator
# playback that never stops, in the live UI
import bpy
bpy.ops.screen.animation_play()
