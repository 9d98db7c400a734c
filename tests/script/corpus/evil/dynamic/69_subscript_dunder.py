# expect: static underscore
d = {}
x = d['__class__']
