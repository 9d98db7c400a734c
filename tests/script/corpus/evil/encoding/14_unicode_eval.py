# expect: static builtin
ｅｖａｌ('1 + 1')
