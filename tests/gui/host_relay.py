"""gui.addon's host side for a Blender in a root of its own (issue 30: deploy/blender-roots.sh).

  /usr/bin/python3 host_relay.py SOCKET

That Blender sees this machine's folders but runs with its root's /usr, so this machine's
programs (the blendmq CLI, gui_scene_call: built against this machine's libraries) cannot run
inside it. gui_driver.py then sends each command it would run (args, env, timeout) as one JSON
line to SOCKET (0600, in the test's private work folder); this runs it here and answers one
JSON line {rc, out, err}. Only run_gui_test.sh starts it, and stops it when the test ends."""
import json
import os
import socket
import subprocess
import sys
import threading

MAX_REQUEST = 1 << 20


def serve(conn):
    with conn:
        data = b""
        while b"\n" not in data and len(data) < MAX_REQUEST:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
        try:
            req = json.loads(data.split(b"\n", 1)[0])
            args, env, timeout = req["args"], req.get("env"), float(req.get("timeout", 300))
            if not (isinstance(args, list) and args and all(isinstance(a, str) for a in args)):
                raise ValueError("args must be a list of strings")
            if env is not None and not (isinstance(env, dict) and all(isinstance(k, str) and isinstance(v, str)
                                                                        for k, v in env.items())):
                raise ValueError("env must map strings to strings")
            p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout)
            reply = {"rc": p.returncode, "out": p.stdout, "err": p.stderr}
        except Exception as e:          # noqa: BLE001 (any failure is the command's answer)
            reply = {"rc": -1, "out": "", "err": "host_relay: %s: %s" % (type(e).__name__, e)}
        conn.sendall((json.dumps(reply) + "\n").encode())


def main():
    path = sys.argv[1]
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    srv.bind(path)
    os.umask(old)
    srv.listen(8)
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
