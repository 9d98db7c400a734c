# expect: sandbox error
# hang: math.comb with large computed arguments
import math
x = math.comb(int("10000000"), int("5000000"))
