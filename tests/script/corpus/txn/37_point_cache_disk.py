# expect: static attribute
# host write: a particle system's cache on disk
import bpy
cube = bpy.data.objects["bmq_txn_cube"]
cube.modifiers.new("p", type="PARTICLE_SYSTEM")
cube.particle_systems[0].point_cache.use_disk_cache = True
