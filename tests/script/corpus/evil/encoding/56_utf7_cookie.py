# -*- coding: utf-7 -*-
# expect: static encoding
import bpy
x = 1 +AAo-import os
