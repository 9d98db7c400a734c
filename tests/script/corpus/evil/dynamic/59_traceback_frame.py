# expect: static underscore
try:
    1 / 0
except Exception as e:
    e.__traceback__.tb_frame.f_globals
