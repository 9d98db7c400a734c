# expect: sandbox timeout
# except Exception around a busy loop: a watchdog exception derived from Exception would be swallowed
import bpy
while True:
    try:
        while True:
            pass
    except Exception:
        pass
