"""gateway_client — the panel's prompt box talking to the blendmq gateway over its REST API
(services/gateway/http_api.c), without ever blocking Blender's UI.

  POST {gateway}/api/chat {"prompt": …}       → 202 {"plan_id", "cid", "state", "links"}
  GET  {gateway}/api/events?plan_id=ID         → Server-Sent Events `progress` (each step, the
       with Last-Event-ID: 0                      plan's start and end, rollback), replayed from
                                                   the gateway's buffer so none is missed
  GET  {gateway}/api/plans/ID                  → the plan's record: planning, validating,
                                                   rejected, queued, executing, done, failed…

The gateway may restart under a prompt (a supervisor brings it back). The event stream then
reconnects with Last-Event-ID, the id of the last event it got ("<gateway instance>-<n>"), and
the gateway first sends an event `gap` when some were missed (its restart, an overflowing
buffer, lost executor events): the panel shows it as a line. The poller waits for an unreachable
gateway; a restarted one no longer knows the plan (404), so its end is then taken from the live
events, or from the audit (GET /api/audit?plan=ID&kind=plan.end).

Two daemon threads per prompt do the HTTP (urllib, no proxy: the gateway is local); they only
put (kind, payload) tuples on a queue. A bpy timer on the main thread drains it into PROMPT
(what the panel draws) and redraws the 3D views. bpy is only touched by that timer."""
import http.client
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
GAPS_SHOWN = 3
ACTIVE_STATES = ("sending", "planning", "validating", "accepted", "queued", "executing")
RETRY_S = (0.5, 5.0)        # reconnection back-off: first, longest
UNREACHABLE_S = 120.0       # the poller gives up on a gateway silent this long
FORGOTTEN_S = 300.0         # a plan a restarted gateway forgot, with no news this long, is given up
MAX_ID = 64                 # an SSE id longer than this is not kept


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
        self.ended = threading.Event()      # the live events told the plan's end
        self.heard = time.monotonic()       # when the live events last brought news
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

    def _submit(self):
        """Ask for the plan (the planner makes it, the validator checks it); returns its id."""
        return self._json("POST", "/api/chat", {"prompt": self.prompt}).get("plan_id")

    def _run(self):
        try:
            plan_id = self._submit()
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
        last, forgotten, silent_since = None, False, None
        while not (forgotten and self.ended.is_set()):    # else the record tells the end, with its result
            try:
                rec = self._audit_end(plan_id) if forgotten else self._json("GET", path)
                if silent_since is not None:
                    self.events.put(("note", ""))       # reachable again
                silent_since = None
            except urllib.error.HTTPError as e:
                if e.code != 404 or forgotten:
                    raise
                forgotten = True        # a restarted gateway: the plan's record went with the old one
                self.heard = max(self.heard, time.monotonic())
                self.events.put(("note", "the gateway restarted and no longer knows this plan: "
                                         "following it through its live events and the audit"))
                continue
            except (urllib.error.URLError, OSError, http.client.HTTPException) as e:
                silent_since = silent_since or time.monotonic()
                if time.monotonic() - silent_since > UNREACHABLE_S:
                    raise
                self.events.put(("note", "gateway unreachable: waiting for it (%s)" % s_error_text(e, self.base)))
                time.sleep(RETRY_S[1])
                continue
            if rec is not None and rec != last:
                self.events.put(("record", rec))
                last = rec
            if rec is None and forgotten and time.monotonic() - self.heard > FORGOTTEN_S:
                # queued behind others, or lost with the old gateway before Blender got it: no way to tell
                rec = {"state": "unknown", "error": {"code": "gateway_restarted", "message": (
                    "the gateway restarted and nothing was heard of plan %s since; `blendmq audit list --plan %s` "
                    "shows whether it ran" % (plan_id, plan_id))}}
                self.events.put(("record", rec))
            if rec is not None and rec.get("state") not in ACTIVE_STATES:
                return
            if forgotten:               # each audit query is audited too: not too often
                self.ended.wait(POLL_S * 10)
            else:
                time.sleep(POLL_S)

    def _audit_end(self, plan_id):
        """The plan's end as the executor audited it, as a record; None while it runs."""
        query = urllib.parse.urlencode({"plan": plan_id, "kind": "plan.end", "limit": 1})
        records = self._json("GET", "/api/audit?" + query).get("records") or []
        data = records[0].get("data") if records and isinstance(records[0], dict) else None
        if not isinstance(data, dict) or not isinstance(data.get("status"), str):
            return None
        return {"state": data["status"], "result": data}

    def _sse(self, plan_id):
        """Follow the plan's events to its end, reconnecting after a cut (a gateway restart)."""
        last_id, pause = "0", RETRY_S[0]
        while not self.done.is_set() and not self.ended.is_set():
            try:
                last_id, up = self._sse_once(plan_id, last_id)
                if up:
                    pause = RETRY_S[0]
            except Exception as e:      # the poller still follows the plan
                if self.done.is_set():
                    return
                self.events.put(("note", "live progress stream interrupted: %s; reconnecting" % s_error_text(e, self.base)))
            self.done.wait(pause)
            pause = min(pause * 2, RETRY_S[1])

    def _sse_once(self, plan_id, last_id):
        """One connection; returns (the last event id seen, whether the stream was up)."""
        url = "%s/api/events?plan_id=%s" % (self.base, urllib.parse.quote(plan_id, safe=""))
        req = urllib.request.Request(url, headers=self._headers({"Accept": "text/event-stream",
                                                                 "Last-Event-ID": last_id}))
        with self.opener.open(req, timeout=SSE_TIMEOUT_S) as resp:
            event, data, event_id = "message", [], None
            while not self.done.is_set():
                line = resp.readline(MAX_LINE)
                if not line:
                    return last_id, True
                line = line.decode("utf-8", "replace").rstrip("\r\n")
                if line.startswith("event:"):
                    event = line[6:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:].strip())
                elif line.startswith("id:"):
                    event_id = line[3:].strip()
                elif not line:
                    # an id counts even without data: the gateway marks the stream's position so
                    last_id = event_id if event_id and len(event_id) <= MAX_ID else last_id
                    if not data:
                        event, event_id = "message", None
                        continue
                    body = json.loads("\n".join(data))
                    if event == "gap" and isinstance(body, dict):
                        self.events.put(("gap", body))
                    elif event == "progress":
                        self.heard = time.monotonic()
                        self.events.put(("progress", body))
                        if body.get("event") == "plan" and body.get("status") != "started":
                            self.ended.set()
                            return last_id, True
                    event, data, event_id = "message", [], None
        return last_id, True


def s_gap_text(gap):
    """One line for a `gap` event (services/gateway/http_events.h)."""
    reason, missed = gap.get("reason"), gap.get("missed")
    if reason == "gateway restarted":
        return "gap: the gateway restarted; events published while it was down are missing"
    if reason == "evicted":
        n = missed if isinstance(missed, int) else gap.get("dropped")
        return "gap: %s event(s) missed (the gateway's buffer overflowed)" % (n if isinstance(n, int) else "some")
    if isinstance(gap.get("message"), str):
        return gap["message"][:300]
    return "gap: some events were missed (%s)" % str(reason)[:80]


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
        self.gaps = []          # lines saying what the live events missed, newest last
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
        elif kind == "gap":
            self.gaps = (self.gaps + [s_gap_text(payload)])[-GAPS_SHOWN:]
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
