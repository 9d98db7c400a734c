# expect: sandbox error
# memory: a printf width taken from the arguments
s = "%0*d" % (int("2000000000"), 1)
