# expect: sandbox error
# a list that doubles itself until memory runs out
import bpy
items = [0]
while True:
    items.extend(items)
