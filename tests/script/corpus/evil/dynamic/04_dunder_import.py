# expect: static underscore
__import__('os').system('id')
