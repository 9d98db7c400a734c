# expect: sandbox timeout
# an endless generator summed
import bpy
def ones():
    while True:
        yield 1
total = sum(ones())
