"""scripts_client — the panel's "Pending scripts": the scripts the gateway's sandbox has
run (GET /api/scripts), and "Apply to live" for one of them (POST
/api/scripts/ID/confirm {"sha256"}: the sha256 the listing showed for that entry, so what
runs is exactly the script listed; the executor refuses anything else). HTTP runs on background threads; a timer on the main thread
takes the answers and redraws the panel. Applying changes this very Blender: the
executor sends the script back here over the add-on's own link, on the main thread."""
import json
import queue
import threading
import urllib.error
import urllib.request

import bpy

from .gateway_client import HTTP_TIMEOUT_S, MAX_LINE, s_error_text, s_opener

SCRIPTS = []            # [{script_id, ok, applied, lines, sha256, verdict}], newest first
MESSAGE = ""            # the last refresh's or apply's outcome
BUSY = False
_ANSWERS = queue.Queue()


def s_request(base, token, method, path, body=None):
    headers = {"Accept": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + token
    data = json.dumps(body if body is not None else {}).encode("utf-8") if method == "POST" else None
    if data is not None:
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(base.rstrip("/") + path, data=data, headers=headers, method=method)
    with s_opener().open(req, timeout=HTTP_TIMEOUT_S * 6) as resp:
        return json.loads(resp.read(MAX_LINE).decode("utf-8"))


def s_confirm(base, token, apply_id, sha256):
    """The script.reply body; a refusal (409) or failure (422) carries one too."""
    try:
        return s_request(base, token, "POST", "/api/scripts/%s/confirm" % apply_id, {"sha256": sha256})
    except urllib.error.HTTPError as e:
        if e.code not in (409, 422):
            raise
        try:
            answer = json.loads(e.read(MAX_LINE).decode("utf-8", "replace"))
        except (ValueError, OSError):
            raise e
        if not isinstance(answer, dict) or "status" not in answer:
            raise e
        return answer


def s_worker(base, token, apply_id, sha256):
    try:
        if apply_id:
            answer = s_confirm(base, token, apply_id, sha256)
            note = "script %s: %s" % (apply_id, answer.get("status", "?"))
            if answer.get("message"):
                note += ": " + str(answer["message"])
        else:
            note = ""
        listing = s_request(base, token, "GET", "/api/scripts")
        _ANSWERS.put((listing.get("scripts", []), note))
    except Exception as e:          # shown in the panel; never raised into Blender
        _ANSWERS.put((None, s_error_text(e, base)))


def s_start(base, token, apply_id=None, sha256=""):
    global BUSY
    if BUSY:
        return
    BUSY = True
    threading.Thread(target=s_worker, args=(base, token, apply_id, sha256), name="blendmq-scripts", daemon=True).start()
    if not bpy.app.timers.is_registered(s_drain):
        bpy.app.timers.register(s_drain, first_interval=0.1)


def refresh(base, token):
    s_start(base, token)


def apply(base, token, script_id, sha256):
    """Confirm script_id, bound to sha256: the sha256 GET /api/scripts listed for it."""
    s_start(base, token, script_id, sha256)


def s_drain():
    global SCRIPTS, MESSAGE, BUSY
    try:
        scripts, note = _ANSWERS.get_nowait()
    except queue.Empty:
        return 0.1
    BUSY = False
    if scripts is not None:
        SCRIPTS = [s for s in scripts if isinstance(s, dict)][:20]
    MESSAGE = note
    from .gui import s_redraw_panels
    s_redraw_panels()
    return None
