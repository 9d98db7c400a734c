# expect: sandbox timeout
import bpy
n = 10
total = 0
for i in range(n ** 5):
    for j in range(n ** 5):
        total += i * j
