# expect: static bpy
from bpy import utils
utils.execfile('/tmp/x.py')
