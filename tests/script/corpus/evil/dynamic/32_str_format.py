# expect: static attribute
leak = '{0.__class__.__base__}'.format(1)
