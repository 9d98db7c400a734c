import bpy
import math

bpy.ops.object.select_all(action='DESELECT')
rings = []
for i in range(3):
    bpy.ops.mesh.primitive_torus_add(major_radius=1.0 + i * 0.5, minor_radius=0.1,
                                     major_segments=48, minor_segments=12,
                                     rotation=(math.pi / 2 * i, 0, 0), location=(0, 0, 2))
    ring = bpy.context.active_object
    ring.name = "Ring%d" % i
    rings.append(ring)
total = sum(len(r.data.vertices) for r in rings)
assert total > 0
bpy.ops.object.select_all(action='DESELECT')
for r in rings:
    r.select_set(True)
bpy.context.view_layer.objects.active = rings[0]
bpy.ops.object.shade_smooth()
