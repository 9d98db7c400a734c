import bpy
import math

# Point lights spaced along a helix, fading in power, with colors cycling through a list.
colors = [(1.0, 0.4, 0.2), (0.3, 0.6, 1.0), (0.4, 1.0, 0.5)]
for i in range(12):
    t = i / 11
    x = 3 * math.cos(t * 4 * math.pi)
    y = 3 * math.sin(t * 4 * math.pi)
    bpy.ops.object.light_add(type="POINT", radius=0.1, location=(x, y, t * 6))
    lamp = bpy.context.active_object
    lamp.name = f"HelixLight{i}"
    lamp.data.energy = 200 * (1 - t) + 20
    lamp.data.color = colors[i % len(colors)]
