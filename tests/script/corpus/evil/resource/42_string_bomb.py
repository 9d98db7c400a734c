# expect: static limit
s = 'x' * 10 ** 10
