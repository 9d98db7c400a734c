# expect: static builtin
e = eval
e('1 + 1')
