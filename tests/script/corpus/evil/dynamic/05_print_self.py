# expect: static underscore
b = print.__self__
b.open('/etc/passwd').read()
