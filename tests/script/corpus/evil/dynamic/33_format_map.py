# expect: static attribute
'{x}'.format_map({'x': 1})
