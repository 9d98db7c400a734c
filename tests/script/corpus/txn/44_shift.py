# expect: sandbox error
# hang / memory: a left shift by a computed amount
x = 1 << int("90000000000")
