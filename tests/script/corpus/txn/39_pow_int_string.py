# expect: sandbox error
# hang: pow(7, int("50000000")) blocked Blender's main thread ~75 s
x = pow(7, int("50000000"))
