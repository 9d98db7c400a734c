"""protocol — the add-on's wire format (the C side is services/executor/blender_link.c). Both
sides take the link version, the limits, the commands and the hello report's fields from one
declaration, proto/blender_link.json (here through the generated link_proto.py).

Frame (both directions): u32 BE json length H, u32 BE blob length B, H bytes UTF-8 JSON object,
B bytes blob. H <= 1 MiB, B <= 64 MiB (before `hello` succeeds: H <= 64 KiB, B = 0, so an
unauthenticated peer cannot make us buffer much). A bad frame gets an error reply (id 0) and
the connection is closed.

After the hello exchange every frame (both directions) is followed by its 32-byte MAC
(tokens.FrameMacs; proto/blender_link.json handshake.session), not counted in H or B.

Request: {"id": int, "cmd": str, "args": {...}, "deadline_ms"?: number}.
Reply:   {"id": int, "ok": bool, "result"?: {...}, "error"?: str, "bpy_ms": number}.
Handshake (link version 3; the shared token never crosses the wire):
  server → {"id": 0, "ok": true, "addon": ..., "challenge": {"link": 2, "nonce": hex(Ns)}}
           sent as soon as the connection is accepted (Ns: 32 random bytes)
  client → {"id": n, "cmd": "hello", "args": {"nonce": hex(Nc), "operations": [names...],
           "bounds": {operation: {param: {type, min, max, ...}}},
           "mac": hex(HMAC-SHA256(token, "blendmq-link-client" || Ns || Nc))}}
  server → {"id": n, "ok": true, "result": {..., "mac": hex(HMAC-SHA256(token,
           "blendmq-link-server" || Nc || Ns))}}   (after checking the client's mac)
           or {"id": n, "ok": false, "error": "unauthorized: ..."} and the connection closes.
The client checks the server's mac before it sends any command. Nonces are raw bytes in the
HMAC input, hex on the wire; the labels are ASCII without a terminator.

Interrupted plans (issue 17; transaction.py): the hello reply's result also carries
  "interrupted": [{"id": 16 hex, "plan_id", "cid": str|null, "steps_run", "steps_total",
                   "rollback": {"removed": [names], "restored": [names], "removed_count",
                                "restored_count"} | null, "at": unix ms, "reason", "error"?}]
  "open_plan":   {"plan_id", "cid", "steps_run", "steps_total", "reason", "error"}   (if one is open)
and the client, once it has recorded reports, sends interrupted_ack {"ids": [...]}. plan_begin
takes {"plan_id", "cid"?, "steps"?}. The field names below are the declaration's
(link_proto.HELLO_REPORT_TABLES, generated like the C side's tables); tests/txn/check_link_drift.py
checks that transaction.py writes them and executor_plan.c sends plan_begin's.
"""
import json
import struct

from . import link_proto

ADDON_VERSION = "0.1.0"
LINK_VERSION = link_proto.LINK_VERSION
MAX_JSON = link_proto.MAX_JSON
MAX_BLOB = link_proto.MAX_BLOB
PREAUTH_MAX_JSON = link_proto.PREAUTH_MAX_JSON
PREAUTH_MAX_BLOB = link_proto.PREAUTH_MAX_BLOB


def s_fields(table):
    return tuple(f[0] for f in link_proto.HELLO_REPORT_TABLES[table])


HELLO_REPORT_FIELDS = s_fields("hello")
REPORT_FIELDS = s_fields("report")
OPEN_PLAN_FIELDS = s_fields("open_plan")
ROLLBACK_FIELDS = s_fields("rollback")
PLAN_BEGIN_FIELDS = tuple(link_proto.COMMANDS["plan_begin"]["args"])


class FrameError(Exception):
    """The peer broke framing; reply (id 0) and close."""


def s_reject_constant(name):
    raise ValueError("non-finite number " + name)


def encode(obj, blob=b""):
    """The frame header and JSON of one message; the caller sends `blob` after it."""
    js = json.dumps(obj, separators=(",", ":"), allow_nan=False).encode("utf-8")
    return struct.pack(">II", len(js), len(blob)) + js


def take_frame(buf, authed, macs=None):
    """Remove the first complete frame from `buf` (a bytearray) and return (request, blob);
    None when more bytes are needed. Raises FrameError on a bad frame. Lengths are checked
    before anything waits for the body. With `macs` (tokens.FrameMacs: after hello) the frame
    ends with its MAC, checked before its JSON is even parsed."""
    if len(buf) < 8:
        return None
    hlen, blen = struct.unpack_from(">II", buf)
    cap_h, cap_b = (MAX_JSON, MAX_BLOB) if authed else (PREAUTH_MAX_JSON, PREAUTH_MAX_BLOB)
    if hlen > cap_h or blen > cap_b:
        raise FrameError("frame too large (json %d, blob %d bytes)" % (hlen, blen))
    tail = link_proto.FRAME_MAC_BYTES if macs is not None else 0
    if len(buf) < 8 + hlen + blen + tail:
        return None
    head = bytes(buf[:8])
    raw = bytes(buf[8:8 + hlen])
    blob = bytes(buf[8 + hlen:8 + hlen + blen])
    mac = bytes(buf[8 + hlen + blen:8 + hlen + blen + tail])
    del buf[:8 + hlen + blen + tail]
    if macs is not None and not macs.check(mac, head, raw, blob):
        raise FrameError("frame MAC does not match (forged, replayed or out of order): dropped")
    try:
        req = json.loads(raw.decode("utf-8"), parse_constant=s_reject_constant)
    except (ValueError, RecursionError) as e:
        raise FrameError("invalid JSON: %s" % e)
    if not isinstance(req, dict):
        raise FrameError("request must be a JSON object")
    return req, blob
