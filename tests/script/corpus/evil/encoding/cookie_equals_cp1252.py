#!/usr/bin/python3
# fileencoding=cp1252
# expect: static encoding
# the '=' spelling of the cookie, on line 2
import bpy
label = '“quoted”'
bpy.ops.mesh.primitive_cube_add(size=1)
