"""link_client — a test client of the add-on's link, and a background server to talk to, in one
headless Blender (tests/txn/check_run_plan.py, tests/assets/check_asset_import.py).

serve(script, bounds) runs the add-on's background runtime on the main thread (bpy is only
touched there) until `script(client, out)`, run on a thread with a Client that has said hello
with `bounds` (the palette's bounds, as an executor sends them), has finished; it returns `out`.
A script that raises is recorded in out["error"] (and the server stopped)."""
import json
import os
import socket
import struct
import tempfile
import threading
import time

from blendmq import tokens

TOKEN = "t" * 40


def frame(obj, blob=b""):
    text = json.dumps(obj).encode()
    return struct.pack(">II", len(text), len(blob)) + text + blob


class Client:
    def __init__(self, port, bounds, token=TOKEN):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.buf = b""
        self.macs = None        # after hello: every frame carries its MAC (link 3)
        self.port, self.bounds, self.token = port, bounds, token
        first = self.recv()
        ns = bytes.fromhex(first["challenge"]["nonce"])
        nc = os.urandom(tokens.NONCE_BYTES)
        mac = tokens.client_proof(token, ns, nc)
        self.send({"id": 1, "cmd": "hello", "args": {"nonce": nc.hex(), "mac": mac.hex(),
                                                      "operations": sorted(bounds), "bounds": bounds}})
        self.hello = self.recv()
        self.macs = tokens.FrameMacs(tokens.session_key(token, ns, nc), "client")

    def send(self, obj, blob=b""):
        data = frame(obj, blob)
        self.sock.sendall(data + (self.macs.seal(data) if self.macs else b""))

    def recv(self):
        while True:
            if len(self.buf) >= 8:
                h, b = struct.unpack(">II", self.buf[:8])
                tail = tokens.FRAME_MAC_BYTES if self.macs else 0
                if len(self.buf) >= 8 + h + b + tail:
                    if self.macs and not self.macs.check(self.buf[8 + h + b:8 + h + b + tail], self.buf[:8 + h + b]):
                        raise ValueError("the add-on's frame failed its MAC")
                    msg = json.loads(self.buf[8:8 + h])
                    self.buf = self.buf[8 + h + b + tail:]
                    return msg
            data = self.sock.recv(65536)
            if not data:
                raise EOFError
            self.buf += data

    def again(self):
        """A second client on the same server (after this one's link dropped)."""
        return Client(self.port, self.bounds, self.token)


def serve(script, bounds):
    from blendmq import background
    port_file = os.path.join(tempfile.gettempdir(), "bmq-link-test-port-%d" % os.getpid())
    out = {}

    def client():
        try:
            for _ in range(200):
                if os.path.exists(port_file):
                    break
                time.sleep(0.02)
            c = Client(int(open(port_file).read()), bounds)
            out["hello"] = c.hello
            if script(c, out) is not False:        # False: the script stopped the server itself
                c.send({"id": 99, "cmd": "shutdown", "args": {}})
                c.recv()
        except Exception as e:      # recorded: the main thread checks it
            out["error"] = "%s: %s" % (type(e).__name__, e)
            os.kill(os.getpid(), 15)

    t = threading.Thread(target=client, daemon=True)
    t.start()
    background.run_background("127.0.0.1", 0, TOKEN, port_file)
    t.join(10)
    return out
