# expect: static limit
# nested comprehension loops multiply to ten million
import bpy
cells = [(a, b, c) for a in range(1000) for b in range(1000) for c in range(10)]
