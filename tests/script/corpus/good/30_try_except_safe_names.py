import bpy

# Look objects up by name, tolerating missing ones; create what is missing.
wanted = ["Crate", "Barrel", "Crate"]
made = []
for name in wanted:
    try:
        obj = bpy.data.objects[name]
    except KeyError:
        if name == "Barrel":
            bpy.ops.mesh.primitive_cylinder_add(radius=0.4, depth=1.0, location=(len(made) * 1.5, 0, 0.5))
        else:
            bpy.ops.mesh.primitive_cube_add(size=0.9, location=(len(made) * 1.5, 0, 0.45))
        obj = bpy.context.active_object
        obj.name = name
        made.append(obj)
try:
    ratio = len(made) / (len(wanted) - len(made))
except ZeroDivisionError:
    ratio = 0.0
except Exception as e:
    print("unexpected:", e)
    ratio = -1.0
print(f"made {len(made)} objects, ratio {ratio:.2f}")
