import bpy

# Sort new objects into nested collections: Props/Small and Props/Large.
scene_coll = bpy.context.scene.collection
props = bpy.data.collections.new("Props")
scene_coll.children.link(props)
groups = {}
for label in ("Small", "Large"):
    child = bpy.data.collections.new(label)
    props.children.link(child)
    groups[label] = child

for i in range(6):
    size = 0.3 + 0.3 * i
    bpy.ops.mesh.primitive_cube_add(size=size, location=(i * 2.0, 0, size / 2))
    obj = bpy.context.active_object
    obj.name = f"Box{i}"
    target = groups["Small"] if size < 1.0 else groups["Large"]
    for coll in list(obj.users_collection):
        coll.objects.unlink(obj)
    target.objects.link(obj)

print({name: len(c.objects) for name, c in groups.items()})
