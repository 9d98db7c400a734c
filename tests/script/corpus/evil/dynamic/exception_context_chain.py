# expect: static underscore
# an exception's __context__ chain leads to tracebacks and frames
import bpy
try:
    try:
        1 / 0
    except ZeroDivisionError:
        raise ValueError('x')
except ValueError as e:
    e.__context__.__traceback__.tb_frame
