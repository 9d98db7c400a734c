# expect: applied
# persistence: an attribute on random.Random, which outlived the script when facades were
# built once per process
import random
cls = random.Random
cls.bmq_flag = 1
