# expect: sandbox error
# hang: squaring in a loop doubles the size each time (2**40 bits)
x = 3
for i in range(40):
    x = x * x
