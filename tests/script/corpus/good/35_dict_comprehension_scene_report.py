import bpy

# Build a few primitives, then report them grouped by type with comprehensions.


def add(kind, loc):
    if kind == "cube":
        bpy.ops.mesh.primitive_cube_add(size=1, location=loc)
    elif kind == "cone":
        bpy.ops.mesh.primitive_cone_add(radius1=0.5, depth=1, location=loc)
    else:
        bpy.ops.mesh.primitive_torus_add(major_radius=0.5, minor_radius=0.1, location=loc)
    return bpy.context.active_object


created = []
for i, kind in enumerate(sorted(["torus", "cube", "cone"])):
    obj = add(kind, (i * 2.0, 0, 0))
    obj.name = f"Report_{kind}"
    created.append(obj)

by_type = {}
for obj in bpy.context.scene.objects:
    by_type.setdefault(obj.type, []).append(obj.name)
counts = {kind: len(names) for kind, names in by_type.items()}
mine = [o.name for o in created if o.name.startswith("Report_")]
print(counts, mine)
