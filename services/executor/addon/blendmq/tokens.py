"""tokens — the shared secret of the link, and the challenge-response that proves both ends
know it without sending it (see server.py / protocol.py for the exchange).

Where it comes from, first match wins: the environment (BLENDMQ_TOKEN, or the variable given
with --token-env), else a token file (--token-file; in the GUI the BLENDMQ_TOKEN_FILE variable,
the add-on's token file setting, or <Blender config>/blendmq_token). The GUI generates a token
into the file when there is none, so the add-on works out of the box and the executor reads
the same file (blender.token_file)."""
import hashlib
import hmac
import os
import secrets

from . import link_proto

NONCE_BYTES = link_proto.NONCE_BYTES                        # proto/blender_link.json's handshake
CLIENT_LABEL = link_proto.CLIENT_LABEL.encode("ascii")
SERVER_LABEL = link_proto.SERVER_LABEL.encode("ascii")


def new_nonce():
    return secrets.token_bytes(NONCE_BYTES)


def s_mac(token, label, first, second):
    return hmac.new(token.encode("utf-8"), label + first + second, hashlib.sha256).digest()


def client_proof(token, server_nonce, client_nonce):
    """HMAC-SHA256(token, "blendmq-link-client" || Ns || Nc): what the client answers."""
    return s_mac(token, CLIENT_LABEL, server_nonce, client_nonce)


def server_proof(token, client_nonce, server_nonce):
    """HMAC-SHA256(token, "blendmq-link-server" || Nc || Ns): what the server answers."""
    return s_mac(token, SERVER_LABEL, client_nonce, server_nonce)


def check_client_proof(token, server_nonce, client_nonce, mac):
    """Constant-time comparison of the client's proof."""
    return hmac.compare_digest(client_proof(token, server_nonce, client_nonce), mac)


SESSION_KEY_LABEL = link_proto.SESSION_KEY_LABEL.encode("ascii")
FRAME_LABELS = {"client": link_proto.FRAME_CLIENT_LABEL.encode("ascii"),
                "server": link_proto.FRAME_SERVER_LABEL.encode("ascii")}
FRAME_MAC_BYTES = link_proto.FRAME_MAC_BYTES


def session_key(token, server_nonce, client_nonce):
    """HMAC-SHA256(token, "blendmq-link-session" || Ns || Nc): the key of the frames' MACs."""
    return s_mac(token, SESSION_KEY_LABEL, server_nonce, client_nonce)


class FrameMacs:
    """The MACs of one connection's frames after hello (proto/blender_link.json,
    handshake.session): HMAC-SHA256(key, direction label || u64 BE sequence || header || JSON ||
    blob), a sequence per direction from 0. `me` is "client" or "server": what this end sends
    is sealed with its own label, what it receives is checked against the other's, so a frame
    reflected back, replayed, reordered or dropped fails."""

    def __init__(self, key, me):
        self.key = key
        self.send_label = FRAME_LABELS[me]
        self.recv_label = FRAME_LABELS["server" if me == "client" else "client"]
        self.sent = 0
        self.received = 0

    def _mac(self, label, seq, parts):
        h = hmac.new(self.key, label + seq.to_bytes(8, "big"), hashlib.sha256)
        for part in parts:
            h.update(part)
        return h.digest()

    def seal(self, *parts):
        """The MAC of the next frame sent (its header + JSON, then its blob); advances the
        sending sequence (the caller sends under a lock, in this order)."""
        mac = self._mac(self.send_label, self.sent, parts)
        self.sent += 1
        return mac

    def check(self, mac, *parts):
        """True (and the receiving sequence advances) when `mac` is the next frame's."""
        ok = hmac.compare_digest(self._mac(self.recv_label, self.received, parts), bytes(mac))
        if ok:
            self.received += 1
        return ok


def load_token(token_file=None, token_env="BLENDMQ_TOKEN"):
    if token_file:
        with open(token_file, "r", encoding="utf-8") as f:
            return f.read().strip()
    return os.environ.get(token_env or "BLENDMQ_TOKEN", "").strip()


def generate_token(path):
    """A new random token written to path (0600, replaced atomically). Returns it."""
    token = secrets.token_hex(24)
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    tmp = "%s.tmp.%d" % (path, os.getpid())
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, token.encode("ascii"))
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return token


def resolve_token(token_file):
    """(token, where) for the GUI: the environment, else token_file, generated if missing or
    empty. Raises OSError when the file can be neither read nor written."""
    env = os.environ.get("BLENDMQ_TOKEN", "").strip()
    if env:
        return env, "from BLENDMQ_TOKEN"
    if os.path.exists(token_file):
        token = load_token(token_file)
        if token:
            return token, "from %s" % token_file
    return generate_token(token_file), "new, saved to %s" % token_file
