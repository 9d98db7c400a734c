import bpy


def add_box(name, size, location):
    bpy.ops.mesh.primitive_cube_add(size=1, location=location)
    obj = bpy.context.active_object
    obj.scale = size
    obj.name = name
    return obj


seat = add_box("Seat", (1.0, 1.0, 0.1), (0, 0, 0.5))
back = add_box("Back", (1.0, 0.1, 1.0), (0, 0.45, 1.0))
for ix, x in enumerate((-0.45, 0.45)):
    for iy, y in enumerate((-0.45, 0.45)):
        leg = add_box(f"Leg_{ix}{iy}", (0.08, 0.08, 0.5), (x, y, 0.25))
        leg.parent = seat
back.parent = seat
