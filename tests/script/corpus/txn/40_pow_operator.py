# expect: sandbox error
# hang: ** with an exponent computed at run time
n = int("40000000")
x = 3 ** n
