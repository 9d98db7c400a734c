# expect: sandbox error
# memory: a huge range made into a list
xs = list(range(int("3000000000")))
