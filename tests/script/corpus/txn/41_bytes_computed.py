# expect: sandbox error
# hang / memory: bytes(n) with n computed at run time
n = int("7000000000")
b = bytes(n)
