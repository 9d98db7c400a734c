# expect: sandbox error
# memory: *= on a string by a computed count
s = "x"
n = int("100000000")
s *= n
