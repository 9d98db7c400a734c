# expect: sandbox error
# hang: int() of a very long text is quadratic (Python 3.10 has no digit limit)
s = "9" * 900000
s = s + s + s + s
x = int(s)
