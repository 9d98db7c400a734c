# expect: static underscore
b = print.__ｓｅｌｆ__
b.exec('1')
