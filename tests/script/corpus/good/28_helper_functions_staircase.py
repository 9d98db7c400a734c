import bpy
import math
from mathutils import Vector


def make_step(index, width=2.0, depth=0.3, rise=0.18):
    """One step of a straight staircase."""
    bpy.ops.mesh.primitive_cube_add(size=1, location=(0, index * depth, index * rise + rise / 2))
    step = bpy.context.active_object
    step.name = f"Step_{index:02d}"
    step.scale = (width, depth, rise)
    return step


def handrail(steps, side):
    first, last = steps[0].location, steps[-1].location
    length = (last - first).length
    bpy.ops.mesh.primitive_cylinder_add(vertices=12, radius=0.03, depth=length,
                                        location=(first + last) / 2 + Vector((side * 1.0, 0, 0.9)))
    rail = bpy.context.active_object
    rail.rotation_euler.x = math.atan2(last.y - first.y, last.z - first.z)
    return rail


steps = [make_step(i) for i in range(14)]
rails = [handrail(steps, side) for side in (-1, 1)]
print(f"{len(steps)} steps and {len(rails)} rails")
