# expect: sandbox error
# hang / memory: a string repeated a computed number of times
s = "ab" * int("900000000")
