# expect: static underscore
leak = f'{(1).__class__}'
