# expect: static limit
# subdividing with a huge literal cut count
import bpy
import bmesh
bm = bmesh.new()
bmesh.ops.create_cube(bm, size=1)
bmesh.ops.subdivide_edges(bm, edges=bm.edges, cuts=100000)
