# expect: static import
# fullwidth letters: CPython NFKC-normalises identifiers, so this imports os
import ｏｓ
ｏｓ.system('touch @CANARY_DIR@/pwned-nfkc-os')
