# expect: static import (seed acceptance test B)
import os; os.remove('/important')
