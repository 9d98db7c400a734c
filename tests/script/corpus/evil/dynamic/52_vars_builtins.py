# expect: static builtin
b = vars()['__builtins__']
