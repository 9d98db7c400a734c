# expect: static encoding
# 0xC1 0x9F is an overlong (invalid) UTF-8 '_': a lenient decoder would read print.__self__
import bpy
b = print.헆헆self헆헆
