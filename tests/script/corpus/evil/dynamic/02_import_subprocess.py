# expect: static import
import subprocess
subprocess.run(['sh', '-c', 'id > /tmp/pwned'])
