"""gateway_client — the panel's prompt box talking to the blendmq gateway over its REST API
(services/gateway/http_api.c), without ever blocking Blender's UI.

  POST {gateway}/api/chat {"prompt": …}       → 202 {"plan_id", "cid", "state", "links"}
  GET  {gateway}/api/events?plan_id=ID         → Server-Sent Events `progress` (each step, the
       with Last-Event-ID: 0                      plan's start and end, rollback), replayed from
                                                   the gateway's buffer so none is missed
  GET  {gateway}/api/plans/ID                  → the plan's record: planning, validating,
                                                   rejected, queued, executing, done, failed…

Two daemon threads per prompt do the HTTP (urllib, no proxy: the gateway is local); they only
put (kind, payload) tuples on a queue. A bpy timer on the main thread drains it into PROMPT
(what the panel draws) and redraws the 3D views. bpy is only touched by that timer."""
import json
import queue
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import bpy

POLL_S = 0.5
HTTP_TIMEOUT_S = 10.0
SSE_TIMEOUT_S = 40.0        # the gateway sends a keepalive every 15 s
MAX_LINE = 1 << 20
STEPS_SHOWN = 4
ACTIVE_STATES = ("sending", "planning", "validating", "accepted", "queued", "executing")


def s_opener():
    return urllib.request.build_opener(urllib.request.ProxyHandler({}))


def s_error_text(e, base):
    if isinstance(e, urllib.error.HTTPError):
        try:
            body = json.loads(e.read(65536).decode("utf-8", "replace"))
            err = body.get("error", {})
            return "gateway said %d %s: %s" % (e.code, err.get("code", ""), err.get("message", ""))
        except (ValueError, AttributeError, OSError):
            return "gateway said HTTP %d" % e.code
    if isinstance(e, urllib.error.URLError):
        return "cannot reach the gateway at %s: %s (is `blendmq up` running?)" % (base, e.reason)
    return "%s: %s" % (type(e).__name__, e)


class PromptJob:
    """One prompt, followed to its end by background threads."""

    def __init__(self, base_url, token, prompt):
        self.base, self.token, self.prompt = base_url.rstrip("/"), token, prompt
        self.events = queue.Queue()
        self.done = threading.Event()
        self.opener = s_opener()
        threading.Thread(target=self._run, name="blendmq-prompt", daemon=True).start()

    def _headers(self, extra=None):
        h = {"Accept": "application/json"}
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        h.update(extra or {})
        return h

    def _json(self, method, path, body=None):
        data = json.dumps(body).encode("utf-8") if body is not None else None
        headers = self._headers({"Content-Type": "application/json"} if data is not None else None)
        req = urllib.request.Request(self.base + path, data=data, headers=headers, method=method)
        with self.opener.open(req, timeout=HTTP_TIMEOUT_S) as resp:
            return json.loads(resp.read(MAX_LINE).decode("utf-8"))

    def _run(self):
        try:
            answer = self._json("POST", "/api/chat", {"prompt": self.prompt})
            plan_id = answer.get("plan_id")
            if not isinstance(plan_id, str) or not plan_id:
                raise ValueError("the gateway gave no plan id")
            self.events.put(("accepted", plan_id))
            threading.Thread(target=self._sse, args=(plan_id,), name="blendmq-sse", daemon=True).start()
            self._poll(plan_id)
        except Exception as e:
            self.events.put(("error", s_error_text(e, self.base)))
        finally:
            self.done.set()
            self.events.put(("finished", None))

    def _poll(self, plan_id):
        path = "/api/plans/" + urllib.parse.quote(plan_id, safe="")
        last = None
        while True:
            rec = self._json("GET", path)
            if rec != last:
                self.events.put(("record", rec))
                last = rec
            if rec.get("state") not in ACTIVE_STATES:
                return
            time.sleep(POLL_S)

    def _sse(self, plan_id):
        url = "%s/api/events?plan_id=%s" % (self.base, urllib.parse.quote(plan_id, safe=""))
        req = urllib.request.Request(url, headers=self._headers({"Accept": "text/event-stream",
                                                                 "Last-Event-ID": "0"}))
        try:
            with self.opener.open(req, timeout=SSE_TIMEOUT_S) as resp:
                event, data = "message", []
                while not self.done.is_set():
                    line = resp.readline(MAX_LINE)
                    if not line:
                        return
                    line = line.decode("utf-8", "replace").rstrip("\r\n")
                    if line.startswith("event:"):
                        event = line[6:].strip()
                    elif line.startswith("data:"):
                        data.append(line[5:].strip())
                    elif not line and data:
                        if event == "progress":
                            body = json.loads("\n".join(data))
                            self.events.put(("progress", body))
                            if body.get("event") == "plan" and body.get("status") != "started":
                                return
                        event, data = "message", []
        except Exception as e:      # the poller still follows the plan
            if not self.done.is_set():
                self.events.put(("note", "live progress stream ended: %s" % s_error_text(e, self.base)))


class PromptState:
    """What the panel shows of the latest prompt (main thread only)."""

    def __init__(self, prompt=""):
        self.prompt = prompt
        self.plan_id = ""
        self.state = "sending"
        self.total = 0
        self.steps = {}         # step number → progress body
        self.message = ""
        self.note = ""
        self.finished = False

    @property
    def active(self):
        return not self.finished

    def done_steps(self):
        return sum(1 for s in self.steps.values() if s.get("status") == "ok")

    def recent_steps(self):
        return [self.steps[k] for k in sorted(self.steps)[-STEPS_SHOWN:]]

    def apply(self, kind, payload):
        if kind == "accepted":
            self.plan_id, self.state = payload, "planning"
        elif kind == "progress":
            self._progress(payload)
        elif kind == "record":
            self._record(payload)
        elif kind == "error":
            self.state, self.message = "error", payload
        elif kind == "note":
            self.note = payload
        elif kind == "finished":
            self.finished = True

    def _progress(self, ev):
        self.total = ev.get("total", self.total) or self.total
        if ev.get("event") == "step" and isinstance(ev.get("step"), int):
            self.steps[ev["step"]] = ev
            if self.state in ("planning", "validating", "queued"):
                self.state = "executing"
        elif ev.get("event") == "rollback":
            rb = ev.get("rollback") or {}
            self.note = "rolled back: %d object(s) removed" % len(rb.get("removed") or [])
        elif ev.get("event") == "plan" and ev.get("status") != "started":
            self.state = ev.get("status", self.state)
            self._ended(ev)

    def _record(self, rec):
        self.state = rec.get("state", self.state)
        plan = rec.get("plan")
        if isinstance(plan, list) and plan:
            self.total = len(plan)
        for s in rec.get("steps") or []:
            if isinstance(s.get("step"), int):
                self.steps.setdefault(s["step"], s)
        if self.state == "rejected":
            errors = (rec.get("verdict") or {}).get("errors") or []
            first = errors[0] if errors else {}
            self.message = "rejected by the validator: %s" % (
                first.get("message", json.dumps(first)) if isinstance(first, dict) else first)
        elif isinstance(rec.get("error"), dict):
            self.message = "%s: %s" % (rec["error"].get("code", "error"), rec["error"].get("message", ""))
        elif isinstance(rec.get("result"), dict):
            self._ended(rec["result"])

    def _ended(self, end):
        status = end.get("status", self.state)
        if status == "done":
            self.message = "done: %d/%d steps in %.0f ms" % (
                self.done_steps(), self.total, end.get("duration_ms", 0.0) or 0.0)
        else:
            self.message = "%s: %s" % (status, end.get("error", "") or "see blendmq watch")


JOB = None
PROMPT = None


def busy():
    return JOB is not None and not JOB.done.is_set()


def send(base_url, token, prompt):
    """Start following a new prompt (the previous one is forgotten)."""
    global JOB, PROMPT
    JOB = PromptJob(base_url, token, prompt)
    PROMPT = PromptState(prompt)
    if not bpy.app.timers.is_registered(s_drain):
        bpy.app.timers.register(s_drain, first_interval=0.1, persistent=True)   # across File → Open


def s_drain():
    job, changed = JOB, False
    while job is not None:
        try:
            kind, payload = job.events.get_nowait()
        except queue.Empty:
            break
        if PROMPT is not None:
            PROMPT.apply(kind, payload)
            changed = True
    if changed:
        s_update_progress()
        from .gui import s_redraw_panels
        s_redraw_panels()
    if job is None or (PROMPT is not None and PROMPT.finished and job.events.empty()):
        return None
    return 0.1


def s_update_progress():
    wm = bpy.context.window_manager
    ui = getattr(wm, "blendmq", None)
    if ui is not None and PROMPT is not None:
        ui.progress = 100.0 * PROMPT.done_steps() / PROMPT.total if PROMPT.total else 0.0


def forget():
    global JOB, PROMPT
    JOB, PROMPT = None, None
    if bpy.app.timers.is_registered(s_drain):
        bpy.app.timers.unregister(s_drain)
