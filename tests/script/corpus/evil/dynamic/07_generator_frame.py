# expect: static attribute
g = (x for x in [1])
g.gi_frame.f_back.f_globals
