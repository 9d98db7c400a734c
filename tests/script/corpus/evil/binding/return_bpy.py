# expect: static bpy
# bpy returned from a function
import bpy
def root():
    return bpy
root().app.handlers.load_post.append(print)
