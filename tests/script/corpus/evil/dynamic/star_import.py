# expect: static import
# from M import * binds names the checker cannot see
import bpy
from math import *
