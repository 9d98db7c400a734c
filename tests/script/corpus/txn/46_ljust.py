# expect: sandbox error
# memory: padding to a computed width
s = "a".ljust(int("3000000000"))
