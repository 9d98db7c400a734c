"""confine_probe — run inside a Blender confined the way `blendmq up` confines it
(tests/blender_link/test_blender_confine.c): try what a compromised add-on would, and write what
happened to <state dir>/probe.json. argv after "--": STATE_DIR RUN_DIR DATA_DIR TOKEN_FILE PORT NAME."""
import json
import os
import resource
import socket
import sys

state, run, data, token, port, name = sys.argv[sys.argv.index("--") + 1:][:6]
out = {}


def attempt(key, fn):
    try:
        fn()
        out[key] = "ok"
    except Exception as e:      # the result is the point
        out[key] = "%s: %s" % (type(e).__name__, e)


def write(path):
    def go():
        with open(path, "w") as f:
            f.write("canary")
    return go


def read(path):
    def go():
        with open(path) as f:
            f.read()
    return go


def tcp():
    s = socket.create_connection(("127.0.0.1", int(port)), timeout=2)
    s.sendall(b"escaped")
    s.close()


attempt("write_state", write(os.path.join(state, "canary")))
attempt("write_tmp", write("/tmp/%s" % name))
attempt("write_home", write(os.path.join(os.environ.get("HOME", "/nonexistent"), name)))
attempt("write_run", write(os.path.join(run, name)))
attempt("write_addon", write(os.path.join(data, "services", "executor", "addon", name)))
attempt("write_usr", write("/usr/%s" % name))
attempt("write_token", write(token))
attempt("write_root_home", write("/root/%s" % name))
attempt("read_token", read(token))
attempt("read_secret", read(os.path.join(run, "secret.key")))
attempt("tcp_local", tcp)
out["pythonhashseed"] = os.environ.get("PYTHONHASHSEED")
out["rlimit_as_mb"] = resource.getrlimit(resource.RLIMIT_AS)[0] >> 20
out["rlimit_core"] = resource.getrlimit(resource.RLIMIT_CORE)[0]
out["env"] = sorted(os.environ)
with open(os.path.join(state, "probe.json"), "w") as f:
    json.dump(out, f)
