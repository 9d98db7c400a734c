# expect: static underscore
import random
random._os.system('id')
