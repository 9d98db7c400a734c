# expect: sandbox error
# two functions calling each other without end
import bpy
def ping(n):
    return pong(n + 1)
def pong(n):
    return ping(n + 1)
ping(0)
