# expect: static builtin
base = type(1).mro()[-1]
