# expect: static import
# the sandbox has no network: a connection that works means "live"
import bpy
import socket
s = socket.create_connection(('127.0.0.1', int('@CANARY_PORT@')))
s.sendall(b'pwned-socket')
