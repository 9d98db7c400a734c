# expect: static except
# except BaseException catches SystemExit/KeyboardInterrupt and the watchdog's exception
import bpy
n = 0
while n >= 0:
    try:
        n += 1
    except BaseException:
        n = 0
