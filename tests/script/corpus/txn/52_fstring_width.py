# expect: sandbox error
# memory: an f-string width computed at run time
w = int("999999999")
s = f"{1:{w}}"
