# expect: sandbox error
# hang: math.factorial of a large computed number
import math
x = math.factorial(int("2000000"))
