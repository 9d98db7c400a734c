import bpy

# A vase: a cylinder shaped by a modifier stack (solidify, simple deform, subdivision).
bpy.ops.mesh.primitive_cylinder_add(vertices=32, radius=0.6, depth=2.0, end_fill_type="NOTHING",
                                    location=(0, 0, 1))
vase = bpy.context.active_object
vase.name = "Vase"
stack = [
    ("Taper", "SIMPLE_DEFORM", {"deform_method": "TAPER", "factor": 0.6}),
    ("Twist", "SIMPLE_DEFORM", {"deform_method": "TWIST", "angle": 0.8}),
    ("Shell", "SOLIDIFY", {"thickness": 0.05}),
    ("Smooth", "SUBSURF", {"levels": 2, "render_levels": 3}),
]
for name, kind, settings in stack:
    mod = vase.modifiers.new(name=name, type=kind)
    if "deform_method" in settings:
        mod.deform_method = settings["deform_method"]
    if "factor" in settings:
        mod.factor = settings["factor"]
    if "angle" in settings:
        mod.angle = settings["angle"]
    if "thickness" in settings:
        mod.thickness = settings["thickness"]
    if "levels" in settings:
        mod.levels = settings["levels"]
        mod.render_levels = settings["render_levels"]
bpy.ops.object.shade_smooth()
print([m.name for m in vase.modifiers])
