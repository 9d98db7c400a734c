# expect: sandbox error
# memory: replace("") inserts between every character
s = "y" * 900000
t = s.replace("", s)
