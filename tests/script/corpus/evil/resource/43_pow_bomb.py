# expect: static limit
n = 9 ** 9 ** 9
