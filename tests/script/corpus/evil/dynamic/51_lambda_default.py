# expect: static underscore
leak = (lambda f=print: f.__self__)()
