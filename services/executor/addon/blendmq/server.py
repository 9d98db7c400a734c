"""server — the listening socket and its one client: framing, the challenge-response
handshake, and a poll() that both runtimes drive (background: the main thread; GUI: the I/O
thread).

Handshake (the token never crosses the wire; protocol.py has the frames): on accept the server
sends a random nonce Ns; the client answers `hello` with its nonce Nc and
HMAC-SHA256(token, "blendmq-link-client" || Ns || Nc), which is checked in constant time; only
then does the server prove itself with HMAC-SHA256(token, "blendmq-link-server" || Nc || Ns) in
the hello reply. A wrong proof gets "unauthorized" and the connection is closed. The hello also
carries the palette's operation names and their parameter bounds: run_step refuses any other
operation, and parameters out of bounds (bounds.py). hello's arguments are checked against their
declaration (proto/blender_link.json, link_proto.HELLO_ARGS).

One client at a time, and only an authenticated one holds the slot (issue 24): a connection
waits, unauthenticated, among at most MAX_PENDING others, for at most HELLO_TIMEOUT_S (about a
second); the first whose hello proves the token takes the slot and the others are dropped. So a
local process that connects first and says nothing (or anything) holds nothing: the executor's
hello still gets through at once. While an authenticated client holds the slot, a new connection
gets {"id":0,"ok":false,"error":"busy: ..."} and is closed. Every such event is logged with the
peers involved.

After hello every frame carries a MAC under a session key made from both nonces and the token
(tokens.FrameMacs): a forged, replayed or reordered frame is refused and the connection dropped.

The server listens on TCP (host, port) or, with socket_path, on a unix socket made 0600 (what
`blendmq up` uses: only the owner can connect at all; a confined Blender has no network). A TCP
peer that is not on loopback is refused unless allow_plain_remote: the link is authenticated,
not encrypted.

The hello reply also says what happened to plans whose connection dropped (transaction.py,
issue 17): `interrupted` (rollback reports not yet acknowledged) and `open_plan`. In the GUI it
is sent from the main thread, after any rollback of the previous client's plan has run.
"""
import ipaddress
import os
import selectors
import socket
import stat
import struct
import threading
import time

import bpy

from . import bounds, link_proto, tokens, transaction
from .log import log
from .protocol import ADDON_VERSION, LINK_VERSION, FrameError, encode, take_frame

HELLO_TIMEOUT_S = link_proto.PREAUTH_TIMEOUT_MS / 1000.0     # how long a connection may wait for its hello
MAX_PENDING = link_proto.MAX_PENDING    # unauthenticated connections waiting at once
SEND_TIMEOUT_S = 30.0       # a peer that stops reading must not wedge Blender's main thread
SO_TIMESTAMPING = getattr(socket, "SO_TIMESTAMPING", 37)
SERVING = [None]    # background runtime: the connection whose request the main thread runs now (cancel_poll)
TS_FLAGS = (1 << 3) | (1 << 4)  # SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE


def s_unhex(value, size):
    """bytes of a hex string of exactly `size` bytes, else None."""
    if not isinstance(value, str) or len(value) != 2 * size:
        return None
    try:
        return bytes.fromhex(value)
    except ValueError:
        return None


class Connection:
    """One client socket: incremental frame parser plus a locked writer (GUI replies come
    from the main thread and from the I/O thread)."""

    serials = 0

    def __init__(self, sock, server, peer=None):
        self.sock, self.server = sock, server
        Connection.serials += 1
        self.serial = Connection.serials    # owner of the plans it opens (transaction.link_lost)
        self.drop_reason = "the connection closed"
        self.peer = "%s:%d" % peer[:2] if isinstance(peer, tuple) and len(peer) >= 2 else "local socket #%d" % self.serial
        self.buf = bytearray()
        self.authed = False
        self.macs = None        # tokens.FrameMacs once hello succeeded: frames read are checked
        self.sealing = False    # frames sent carry their MAC (from the frame after the hello reply)
        self.nonce = tokens.new_nonce()     # Ns: this connection's challenge
        self.operations = frozenset()       # the palette's operation names, from hello
        self.closed = False     # set by Server.drop_client (the socket is gone)
        self.dead = False       # a send failed: no more replies; the reader drops us on EOF
        self.opened = time.monotonic()
        self.aside = []         # frames read_aside read while a long command ran, for after it
        self.aside_lost = None  # why the link broke while read_aside read it (dropped after the command)
        self.lock = threading.Lock()
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(SEND_TIMEOUT_S)
        # Kernel receive timestamps tell when a request really arrived, so a request that sat
        # in the socket buffer while a long command ran still honours its deadline_ms.
        try:
            sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPING, TS_FLAGS)
            self.stamped = True
        except OSError:
            self.stamped = False

    def send(self, reply, blob=b""):
        if self.closed or self.dead:
            return False
        try:
            frame = encode(reply, blob)
        except ValueError as e:
            self._fail(e)
            return False
        return self.send_frame(frame, blob)

    def send_frame(self, frame, blob=b""):
        """Send an encoded reply (encode(), or snapshot.SceneData.reply_frame) and its blob."""
        if self.closed or self.dead:
            return False
        try:
            with self.lock:
                mac = self.macs.seal(frame, blob) if self.sealing else b""
                s_send_parts(self.sock, [p for p in (frame, blob, mac) if p])
            return True
        except OSError as e:
            self._fail(e)
            return False

    def _fail(self, e):
        # Only the reading side closes sockets (in the GUI that is another thread): shut
        # the socket down so it sees EOF and drops us.
        log("send failed, dropping client: %s" % e)
        self.drop_reason = "a reply could not be sent: %s" % e
        self.dead = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _recv(self):
        now = time.monotonic()
        if not self.stamped:
            return self.sock.recv(1 << 18), now
        data, anc, _flags, _addr = self.sock.recvmsg(1 << 18, socket.CMSG_SPACE(48))
        for level, kind, payload in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPING and len(payload) >= 16:
                sec, nsec = struct.unpack_from("qq", payload)
                if sec:
                    now -= max(0.0, time.time() - (sec + nsec / 1e9))
        return data, now

    def read(self):
        """Read what is available. Returns [(req, blob, arrival)]; raises EOFError/OSError when
        the peer is gone and FrameError on a bad frame."""
        data, arrival = self._recv()
        if not data:
            raise EOFError("peer closed")
        self.buf += data
        out = []
        while True:
            frame = take_frame(self.buf, self.authed, self.macs)
            if frame is None:
                break
            req, blob = frame
            if not self.authed:
                self._hello(req)    # raises FrameError when refused
                continue
            out.append((req, blob, arrival))
        return out

    def read_aside(self):
        """While the main thread runs a long command (run_script) in the background runtime,
        where nobody else reads the link: read what came, without blocking, on the calling
        thread (the script's watchdog). A cancel_plan goes to the server's on_cancel at once;
        every other frame waits in self.aside, in order, for the command's end (_on_client
        handles them then). A link that broke is noted in aside_lost, not dropped here (the
        main thread drops it after the command)."""
        if self.closed or self.dead or self.aside_lost is not None or not self.authed:
            return
        try:
            while selectors.select.select([self.sock], [], [], 0)[0]:
                for req, blob, arrival in self.read():
                    if req.get("cmd") == "cancel_plan" and self.server.on_cancel is not None:
                        self.server.on_cancel(self, req)
                    else:
                        self.aside.append((req, blob, arrival))
        except FrameError as e:
            self.aside_lost = "protocol error: %s" % (e.args[0] or "refused")
        except EOFError:
            self.aside_lost = "the client closed the connection"
        except OSError as e:
            self.aside_lost = "connection error: %s" % e

    def challenge(self):
        """The first frame on a connection: the server's nonce."""
        self.send({"id": 0, "ok": True, "bpy_ms": 0.0, "addon": ADDON_VERSION,
                   "challenge": {"link": LINK_VERSION, "nonce": self.nonce.hex()}})

    def _hello(self, req):
        rid = req.get("id") if isinstance(req.get("id"), int) else 0
        args = req.get("args") if isinstance(req.get("args"), dict) else {}
        why = None
        if req.get("cmd") != "hello":
            why = "unauthorized: the first request must be hello"
        elif "token" in args:
            why = "unauthorized: this add-on never takes the token itself (link %d: answer the challenge)" \
                % LINK_VERSION
        else:
            nonce = s_unhex(args.get("nonce"), tokens.NONCE_BYTES)
            mac = s_unhex(args.get("mac"), link_proto.MAC_BYTES)
            ops, limits = args.get("operations") or [], args.get("bounds")
            if nonce is None or mac is None:
                why = "unauthorized: hello needs nonce (%d bytes) and mac (%d bytes), in hex" \
                    % (tokens.NONCE_BYTES, link_proto.MAC_BYTES)
            elif not tokens.check_client_proof(self.server.token, self.nonce, nonce, mac):
                why = "unauthorized: the client's proof does not match (wrong token)"
            else:
                why = link_proto.check_args(link_proto.HELLO_ARGS, args, "hello")
                if why is None and limits is not None:
                    why = bounds.check_bounds(limits)
                    why = "hello: " + why if why else None
        if why:
            log("refused %s: %s" % (self.peer, why))
            self.send({"id": rid, "ok": False, "error": why, "bpy_ms": 0.0})
            raise FrameError(None)     # already replied; the connection is closed
        self.authed = True
        self.macs = tokens.FrameMacs(tokens.session_key(self.server.token, self.nonce, nonce), "server")
        self.server.take_slot(self)
        self.operations = frozenset(ops)
        bounds.set_palette(self.operations, limits)
        self.server.changed += 1
        result = dict(self.server.info)
        result["mac"] = tokens.server_proof(self.server.token, nonce, self.nonce).hex()
        result["operations"] = len(self.operations)
        result["bounds"] = len(limits) if limits is not None else 0
        if self.server.on_hello is not None:
            self.server.on_hello(self, rid, result)     # the GUI: finish_hello on the main thread
        else:
            self.finish_hello(rid, result)

    def finish_hello(self, rid, result):
        """Send the hello reply, with the interrupted plans as they are now."""
        result.update(transaction.hello_fields())
        self.send({"id": rid, "ok": True, "result": result, "bpy_ms": 0.0})
        self.sealing = True     # the client sends nothing before this reply: no frame races it


class Server:
    """Listening socket + at most one client, driven by poll(); on_request(conn, req, blob,
    arrival) is called for each authenticated request, in order; on_drop(conn) (optional)
    when an authenticated client goes away (conn.drop_reason says why); on_hello(conn, rid,
    result) (optional) to send the hello reply later, with conn.finish_hello; on_cancel(conn,
    req) (optional) for each cancel_plan, before the frames read with it are handled (a plan
    they follow may be running). `changed` counts connection events (for the GUI panel)."""

    def __init__(self, host, port, token, on_request, on_drop=None, on_hello=None, on_cancel=None,
                 socket_path=None, allow_plain_remote=False):
        self.token, self.on_request, self.on_drop, self.on_hello = token, on_request, on_drop, on_hello
        self.on_cancel = on_cancel
        self.allow_plain_remote = allow_plain_remote
        self.info = {"blender": bpy.app.version_string.split(" ")[0],
                     "background": bool(bpy.app.background), "addon": ADDON_VERSION}
        self.socket_path = socket_path
        if socket_path:
            self.listener = s_unix_listener(socket_path)
            self.host, self.port = "unix:" + socket_path, 0
        else:
            self.listener = socket.create_server((host, port), backlog=8)
            self.host = host
            self.port = self.listener.getsockname()[1]
        self.listener.setblocking(False)
        self.wake_r, self.wake_w = socket.socketpair()
        self.wake_r.setblocking(False)
        self.wake_w.setblocking(False)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.listener, selectors.EVENT_READ, "listen")
        self.sel.register(self.wake_r, selectors.EVENT_READ, "wake")
        self.client = None      # the authenticated client: the one slot
        self.pending = []       # unauthenticated connections waiting for their hello (oldest first)
        self.stopping = False
        self.changed = 0
        bounds.set_palette(frozenset())     # no client yet: no run_step

    @property
    def where(self):
        return self.host if self.socket_path else "%s:%d" % (self.host, self.port)

    def wake(self):
        try:
            self.wake_w.send(b"x")
        except OSError:
            pass

    def poll(self, timeout=None):
        if self.pending:    # bound how long an unauthenticated peer may wait
            left = max(0.0, min(c.opened for c in self.pending) + HELLO_TIMEOUT_S - time.monotonic())
            timeout = left if timeout is None else min(timeout, left)
        events = self.sel.select(timeout)
        # Connections first: an EOF must free the slot before a new connection is judged busy.
        for key, _mask in sorted(events, key=lambda e: not isinstance(e[0].data, Connection)):
            if isinstance(key.data, Connection):
                if not key.data.closed:
                    self._on_client(key.data)
            elif key.data == "wake":
                try:
                    while self.wake_r.recv(4096):
                        pass
                except OSError:
                    pass
            elif key.data == "listen":
                self._accept()
        now = time.monotonic()
        for c in [c for c in self.pending if now > c.opened + HELLO_TIMEOUT_S]:
            log("dropped %s: no hello within %.1f s (it held no slot)" % (c.peer, HELLO_TIMEOUT_S))
            c.drop_reason = "no hello within %.1f s" % HELLO_TIMEOUT_S
            self.drop_client(c)

    def take_slot(self, conn):
        """conn proved the token (hello): it becomes the client; every other connection still
        waiting for its hello is dropped."""
        if conn in self.pending:
            self.pending.remove(conn)
        if self.client is not None and self.client is not conn:     # cannot happen: busy is refused
            self.client.drop_reason = "another authenticated client took the link"
            self.drop_client(self.client)
        self.client = conn
        self.changed += 1
        others = list(self.pending)
        log("link taken by %s (authenticated)%s" % (
            conn.peer, "; dropping %d unauthenticated connection(s): %s" % (len(others), ", ".join(c.peer for c in others))
            if others else ""))
        for c in others:
            c.drop_reason = "%s authenticated and took the link" % conn.peer
            self.drop_client(c)

    def _accept(self):
        try:
            sock, addr = self.listener.accept()
        except OSError:
            return
        peer = "%s:%d" % addr[:2] if isinstance(addr, tuple) and len(addr) >= 2 else "local socket"
        if not self.socket_path and not self.allow_plain_remote and not s_loopback(addr):
            log("refused %s: not on loopback, and the link is not encrypted (allow_plain_remote is off)" % peer)
            self._refuse(sock, "refused: the link is authenticated but not encrypted, so only loopback peers "
                               "are served (the add-on's allow_plain_remote)")
            return
        if self.client and not self._alive(self.client):
            self.client.drop_reason = "the connection was found dead when another client connected"
            self.drop_client(self.client)
        if self.client:
            log("refused %s: busy, the link is held by %s (authenticated)" % (peer, self.client.peer))
            self._refuse(sock, "busy: another client is connected")
            return
        if len(self.pending) >= MAX_PENDING:
            oldest = self.pending[0]
            log("dropped %s: %d connections already wait for a hello, the oldest makes room" % (oldest.peer, MAX_PENDING))
            oldest.drop_reason = "too many connections waiting for a hello"
            self.drop_client(oldest)
        conn = Connection(sock, self, addr)
        self.pending.append(conn)
        self.changed += 1
        self.sel.register(sock, selectors.EVENT_READ, conn)
        if len(self.pending) > 1:
            log("%s connected while %d other(s) wait for their hello (%s): the first to authenticate takes the link"
                % (conn.peer, len(self.pending) - 1, ", ".join(c.peer for c in self.pending[:-1])))
        conn.challenge()

    @staticmethod
    def _refuse(sock, why):
        try:
            sock.settimeout(1.0)
            sock.sendall(encode({"id": 0, "ok": False, "bpy_ms": 0.0, "error": why}))
        except OSError:
            pass
        sock.close()

    @staticmethod
    def _alive(conn):
        try:
            if not selectors.select.select([conn.sock], [], [], 0)[0]:
                return True
            return conn.sock.recv(1, socket.MSG_PEEK) != b""
        except OSError:
            return False

    def _on_client(self, conn):
        try:
            reqs = conn.read()
        except FrameError as e:
            reqs = None
            conn.drop_reason = "protocol error: %s" % (e.args[0] or "refused")
            if e.args[0]:
                log("bad frame: %s" % e.args[0])
                conn.send({"id": 0, "ok": False, "error": e.args[0], "bpy_ms": 0.0})
        except EOFError:
            reqs = None
            if not conn.dead:
                conn.drop_reason = "the client closed the connection"
        except OSError as e:
            reqs = None
            if not conn.dead:
                conn.drop_reason = "connection error: %s" % e
        if reqs is None:
            self.drop_client(conn)
            return
        if self.on_cancel is not None:      # cancel_plan jumps the queue: it stops a running plan
            for req, _blob, _arrival in reqs:
                if req.get("cmd") == "cancel_plan":
                    self.on_cancel(conn, req)
            reqs = [r for r in reqs if r[0].get("cmd") != "cancel_plan"]
        reqs = list(reqs)
        while reqs:
            req, blob, arrival = reqs.pop(0)
            if conn.closed or conn.dead or self.stopping:
                break
            SERVING[0] = conn if threading.current_thread() is threading.main_thread() else None
            try:
                self.on_request(conn, req, blob, arrival)
            finally:
                SERVING[0] = None
            reqs.extend(conn.aside)         # what read_aside read meanwhile came after these
            conn.aside = []
            if conn.aside_lost is not None:
                conn.drop_reason = conn.aside_lost
                self.drop_client(conn)
                return

    def drop_client(self, conn):
        if conn.closed:
            return
        conn.closed = True
        if self.client is conn:
            self.client = None
        if conn in self.pending:
            self.pending.remove(conn)
        self.changed += 1
        try:
            self.sel.unregister(conn.sock)
        except (KeyError, ValueError, OSError):
            pass
        conn.sock.close()
        if conn.authed:
            bounds.set_palette(frozenset())
        if self.on_drop is not None and conn.authed:
            self.on_drop(conn)

    def close(self):
        for c in ([self.client] if self.client else []) + list(self.pending):
            c.drop_reason = "the add-on stopped serving"
            self.drop_client(c)
        self.sel.close()
        for s in (self.listener, self.wake_r, self.wake_w):
            s.close()
        if self.socket_path:
            try:
                os.unlink(self.socket_path)
            except OSError:
                pass


def cancel_poll(plan_id, noted):
    """For run_script (issue 29): a callable the script's watchdog asks, on its own thread,
    whether plan_id was cancelled. noted() says whether a cancel_plan named it (plan_run.CANCELS:
    the runtimes' on_cancel notes it). In the GUI the I/O thread reads the link all along, so
    noted is enough; in the background runtime the main thread is running the script and
    nobody reads the link, so the callable reads it first (Connection.read_aside). A link that
    broke meanwhile counts as a cancel: nobody waits for the script's answer."""
    conn = SERVING[0] if threading.current_thread() is threading.main_thread() else None
    if conn is None:
        return noted

    def poll():
        conn.read_aside()
        return noted() or conn.aside_lost is not None
    return poll


def s_send_parts(sock, parts):
    """sendall of the parts one after the other, in as few system calls as the kernel takes
    (one, for a usual reply: a peer that went away is then seen as EOF by the reader, as before
    the MAC made a frame two writes)."""
    views = [memoryview(p) for p in parts]
    while views:
        sent = sock.sendmsg(views)
        while views and sent >= len(views[0]):
            sent -= len(views[0])
            views.pop(0)
        if views and sent:
            views[0] = views[0][sent:]


def s_loopback(addr):
    try:
        return ipaddress.ip_address(addr[0].split("%")[0]).is_loopback
    except (ValueError, IndexError, TypeError, AttributeError):
        return False


def s_unix_listener(path):
    """A unix socket at `path`, 0600 from the start (made under umask 0177); a stale socket
    left there by a killed Blender is replaced, anything else at that path is an error."""
    try:
        st = os.lstat(path)
        if not stat.S_ISSOCK(st.st_mode):
            raise OSError("%s exists and is not a socket: not replacing it" % path)
        os.unlink(path)
    except FileNotFoundError:
        pass
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(path)
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(8)
    return sock
