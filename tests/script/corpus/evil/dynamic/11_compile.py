# expect: static builtin
code = compile('import os', 'x', 'exec')
