# expect: static import
from os import system
system('id')
