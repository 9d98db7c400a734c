# expect: static builtin
open('/tmp/blendmq-evil-open', 'w').write('pwned')
