# expect: applied
# persistence: mathutils.noise's seed is process state
import mathutils.noise
mathutils.noise.seed_set(987654)
