# expect: static builtin
def f(open=None):
    return open
data = open('/etc/passwd').read()
