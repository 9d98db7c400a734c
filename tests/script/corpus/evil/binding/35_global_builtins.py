# expect: static underscore
def f():
    global __builtins__
    return __builtins__
