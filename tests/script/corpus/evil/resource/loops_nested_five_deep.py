# expect: static limit
# while loops nested deeper than the cap
import bpy
a = b = c = d = e = 0
while a < 9:
    while b < 9:
        while c < 9:
            while d < 9:
                while e < 9:
                    e += 1
                d += 1
            c += 1
        b += 1
    a += 1
