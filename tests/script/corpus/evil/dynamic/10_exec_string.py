# expect: static builtin
exec('import os; os.system("id")')
