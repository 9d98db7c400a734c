"""panel — the N-panel (3D viewport sidebar, tab "blendmq") and its operators.

  Blender link     listening or not, the executor connected or not, the plan running;
    Settings       host, port, token (hidden unless asked; new / copy), start with Blender
  Prompt           the gateway's address, a prompt box and Send, the plan's live progress and Cancel
  Pending scripts  sandboxed scripts from GET /api/scripts, each with "Apply to live"

Drawing only reads module state (gui.SERVICE, gateway_client.PROMPT); operators change it."""
import bpy
from bpy.props import BoolProperty, FloatProperty, PointerProperty, StringProperty

from . import gateway_client, gui, scripts_client, settings, tokens
from .transaction import TXN


class BLENDMQ_PG_ui(bpy.types.PropertyGroup):
    prompt: StringProperty(name="Prompt", default="", description="What to build, e.g. \"build a snowman\"")
    show_token: BoolProperty(name="Show token", default=False, description="Show the shared token")
    progress: FloatProperty(name="Progress", subtype="PERCENTAGE", min=0.0, max=100.0, default=0.0,
                            description="Steps of the running plan applied so far")


# ---------------------------------------------------------------------------- operators

class BLENDMQ_OT_server_start(bpy.types.Operator):
    bl_idname = "blendmq.server_start"
    bl_label = "Start"
    bl_description = "Listen for the executor with the current settings (restarts a running server)"

    def execute(self, context):
        if gui.start_configured() is None:
            self.report({"ERROR"}, gui.LAST_ERROR)
            return {"CANCELLED"}
        return {"FINISHED"}


class BLENDMQ_OT_server_stop(bpy.types.Operator):
    bl_idname = "blendmq.server_stop"
    bl_label = "Stop"
    bl_description = "Stop listening; a connected executor is disconnected"

    def execute(self, context):
        gui.stop()
        return {"FINISHED"}


class BLENDMQ_OT_token_new(bpy.types.Operator):
    bl_idname = "blendmq.token_new"
    bl_label = "New token"
    bl_description = "Write a new random token to the token file and restart the server (the executor must read it again)"

    def execute(self, context):
        s = settings.current()
        if "BLENDMQ_TOKEN" in s.overrides:
            self.report({"ERROR"}, "the token comes from BLENDMQ_TOKEN; unset it to use the token file")
            return {"CANCELLED"}
        try:
            tokens.generate_token(s.token_file)
        except OSError as e:
            self.report({"ERROR"}, "cannot write %s: %s" % (s.token_file, e))
            return {"CANCELLED"}
        if gui.SERVICE is not None:
            gui.start_configured()
        return {"FINISHED"}


class BLENDMQ_OT_token_copy(bpy.types.Operator):
    bl_idname = "blendmq.token_copy"
    bl_label = "Copy token"
    bl_description = "Copy the shared token to the clipboard"

    @classmethod
    def poll(cls, context):
        return gui.SERVICE is not None

    def execute(self, context):
        context.window_manager.clipboard = gui.SERVICE.token
        return {"FINISHED"}


class BLENDMQ_OT_send_prompt(bpy.types.Operator):
    bl_idname = "blendmq.send_prompt"
    bl_label = "Send"
    bl_description = "Send the prompt to the blendmq gateway; the plan it makes runs here through the executor"

    @classmethod
    def poll(cls, context):
        return not gateway_client.busy() and bool(context.window_manager.blendmq.prompt.strip())

    def execute(self, context):
        ui = context.window_manager.blendmq
        s = settings.current()
        ui.progress = 0.0
        gateway_client.send(s.gateway_url, s.gateway_token, ui.prompt.strip())
        return {"FINISHED"}


CANCEL = {"plan_id": "", "message": ""}      # the last Cancel asked: its plan and how the gateway answered


def s_cancel_request(base, token, plan_id):
    """POST /api/plans/{id}/cancel (a daemon thread: the UI never waits on the network). The plan
    stops after its current step and what it did is rolled back; its progress says when."""
    import json
    import urllib.error
    import urllib.parse
    import urllib.request
    url = "%s/api/plans/%s/cancel" % (base.rstrip("/"), urllib.parse.quote(plan_id, safe=""))
    headers = {"Accept": "application/json", "Content-Type": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + token
    req = urllib.request.Request(url, data=b"{}", headers=headers, method="POST")
    try:
        with gateway_client.s_opener().open(req, timeout=10) as resp:
            body = json.loads(resp.read(65536).decode("utf-8"))
        CANCEL["message"] = "cancelling plan %s: it stops after its current step and is rolled back" % body.get("plan_id", plan_id)
    except Exception as e:      # said in the panel, never raised into Blender's UI thread
        CANCEL["message"] = "cancel: " + gateway_client.s_error_text(e, base)


class BLENDMQ_OT_cancel_plan(bpy.types.Operator):
    bl_idname = "blendmq.cancel_plan"
    bl_label = "Cancel"
    bl_description = ("Stop the plan the prompt started: it stops after its current step and what it did is "
                      "rolled back (as `blendmq cancel PLAN_ID`)")

    @classmethod
    def poll(cls, context):
        p = gateway_client.PROMPT
        return p is not None and p.active and bool(p.plan_id)

    def execute(self, context):
        import threading
        s = settings.current()
        plan_id = gateway_client.PROMPT.plan_id
        CANCEL.update(plan_id=plan_id, message="cancelling plan %s…" % plan_id)
        threading.Thread(target=s_cancel_request, args=(s.gateway_url, s.gateway_token, plan_id),
                         name="blendmq-cancel", daemon=True).start()
        return {"FINISHED"}


class BLENDMQ_OT_scripts_refresh(bpy.types.Operator):
    bl_idname = "blendmq.scripts_refresh"
    bl_label = "Refresh"
    bl_description = "Ask the gateway which scripts its sandbox has run"

    @classmethod
    def poll(cls, context):
        return not scripts_client.BUSY

    def execute(self, context):
        s = settings.current()
        scripts_client.refresh(s.gateway_url, s.gateway_token)
        return {"FINISHED"}


class BLENDMQ_OT_script_apply(bpy.types.Operator):
    bl_idname = "blendmq.script_apply"
    bl_label = "Apply to live"
    bl_description = ("Apply exactly this sandboxed script to this scene (refused if the script or the scene "
                      "changed since the sandbox run); one undo step")
    script_id: StringProperty()
    sha256: StringProperty()        # the listed script's: the executor applies only exactly that script

    @classmethod
    def poll(cls, context):
        return not scripts_client.BUSY

    def execute(self, context):
        s = settings.current()
        scripts_client.apply(s.gateway_url, s.gateway_token, self.script_id, self.sha256)
        return {"FINISHED"}


# ---------------------------------------------------------------------------- panels

class s_Sidebar:
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "blendmq"


def s_chars(context):
    """About how many characters fit on a line of the sidebar."""
    region = getattr(context, "region", None)
    scale = context.preferences.system.ui_scale if context.preferences else 1.0
    return max(16, int(((region.width if region else 240) - 40) / (8.0 * scale)))


def s_wrapped(layout, text, width, icon="NONE"):
    """Labels do not wrap: cut long text into lines of at most `width` characters."""
    rest = "BLANK1" if icon != "NONE" else "NONE"       # continuation lines line up
    words, line, first = text.split(" "), "", True
    for w in words:
        if line and len(line) + 1 + len(w) > width:
            layout.label(text=line, icon=icon if first else rest)
            line, first = "", False
        line = (line + " " + w).strip()
    if line:
        layout.label(text=line, icon=icon if first else rest)


class VIEW3D_PT_blendmq(s_Sidebar, bpy.types.Panel):
    bl_label = "Blender link"

    def draw(self, context):
        col = self.layout.column(align=True)
        svc = gui.SERVICE
        if svc is None:
            col.label(text="Not listening", icon="CANCEL")
            if gui.LAST_ERROR:
                s_wrapped(col, gui.LAST_ERROR, s_chars(context), icon="ERROR")
            self.layout.operator("blendmq.server_start", icon="PLAY")
            return
        server = svc.server
        col.label(text="Listening on", icon="CHECKMARK")
        col.label(text="%s:%d" % (server.host, server.port), icon="BLANK1")
        client = server.client
        if client is not None and client.authed:
            col.label(text="Executor connected", icon="LINKED")
            col.label(text="from %s" % client.peer, icon="BLANK1")
        elif client is not None:
            col.label(text="A client is connecting…", icon="TIME")
        else:
            col.label(text="No executor connected", icon="UNLINKED")
        txn = TXN.current
        if txn is not None:
            col.label(text="Running plan %s" % txn.plan_id, icon="SEQ_STRIP_DUPLICATE")
        row = self.layout.row(align=True)
        row.operator("blendmq.server_start", text="Restart", icon="FILE_REFRESH")
        row.operator("blendmq.server_stop", icon="PAUSE")


class VIEW3D_PT_blendmq_settings(s_Sidebar, bpy.types.Panel):
    bl_label = "Settings"
    bl_parent_id = "VIEW3D_PT_blendmq"

    def draw(self, context):
        layout = self.layout
        s = settings.current()
        prefs, ui = s.prefs, context.window_manager.blendmq
        col = layout.column(align=True)
        for prop, env, value in (("host", "BLENDMQ_HOST", s.host), ("port", "BLENDMQ_PORT", s.port)):
            if prefs is not None and env not in s.overrides:
                col.prop(prefs, prop)
            else:
                col.label(text="%s: %s%s" % (prop.title(), value, " (%s)" % env if env in s.overrides else ""))
        if prefs is not None:
            col.prop(prefs, "autostart")
        box = layout.box().column(align=True)
        row = box.row(align=True)
        row.label(text="Token", icon="LOCKED")
        row.prop(ui, "show_token", text="", icon="HIDE_OFF" if ui.show_token else "HIDE_ON", emboss=False)
        row.operator("blendmq.token_copy", text="", icon="COPYDOWN")
        row.operator("blendmq.token_new", text="", icon="FILE_REFRESH")
        token = gui.SERVICE.token if gui.SERVICE is not None else ""
        if not token:
            box.label(text="(starts with the server)")
        elif ui.show_token:
            for i in range(0, len(token), 24):
                box.label(text=token[i:i + 24])
        else:
            box.label(text="•" * 16 + "  (hidden)")
        if gui.TOKEN_WHERE:
            s_wrapped(box, gui.TOKEN_WHERE, s_chars(context))
        if prefs is not None and "BLENDMQ_TOKEN_FILE" not in s.overrides:
            layout.prop(prefs, "token_file", text="File")


class VIEW3D_PT_blendmq_prompt(s_Sidebar, bpy.types.Panel):
    bl_label = "Prompt"

    def draw(self, context):
        layout = self.layout
        s = settings.current()
        ui = context.window_manager.blendmq
        if s.prefs is not None:
            layout.prop(s.prefs, "gateway_url", text="", icon="URL")
        else:
            layout.label(text=s.gateway_url, icon="URL")
        if "BLENDMQ_GATEWAY_URL" in s.overrides:
            layout.label(text="BLENDMQ_GATEWAY_URL overrides this", icon="INFO")
        layout.prop(ui, "prompt", text="", icon="CONSOLE")
        layout.operator("blendmq.send_prompt", icon="PLAY")
        p = gateway_client.PROMPT
        if p is None:
            layout.label(text="The plan's progress shows here.")
            return
        box = layout.box().column(align=True)
        box.label(text=p.state, icon="TIME" if p.active else ("CHECKMARK" if p.state == "done" else "ERROR"))
        if p.plan_id:
            box.label(text="plan " + p.plan_id, icon="BLANK1")
        if p.active and p.plan_id:
            box.operator("blendmq.cancel_plan", icon="CANCEL")
        if CANCEL["plan_id"] and CANCEL["plan_id"] == p.plan_id and CANCEL["message"]:
            s_wrapped(box, CANCEL["message"], s_chars(context), icon="INFO")
        if p.total:
            box.prop(ui, "progress", text="%d/%d steps" % (p.done_steps(), p.total), slider=True)
        for step in p.recent_steps():
            # "bpy.ops.mesh.primitive_uv_sphere_add" → "uv_sphere_add": the sidebar is narrow
            op = str(step.get("operation", "?")).rsplit(".", 1)[-1].replace("primitive_", "")
            ms = step.get("duration_ms")
            box.label(text="%d %s%s" % (step.get("step", 0), op, " %.0f ms" % ms if isinstance(ms, (int, float)) else ""),
                      icon="CHECKMARK" if step.get("status") == "ok" else "ERROR")
        for line in p.gaps:     # what the live events missed (a gateway restart, lost events)
            s_wrapped(box, line, s_chars(context), icon="ERROR")
        if p.message:
            s_wrapped(box, p.message, s_chars(context), icon="INFO")
        if p.note:
            s_wrapped(box, p.note, s_chars(context))


class VIEW3D_PT_blendmq_scripts(s_Sidebar, bpy.types.Panel):
    bl_label = "Pending scripts"

    def draw(self, context):
        layout = self.layout
        layout.operator("blendmq.scripts_refresh", icon="FILE_REFRESH")
        pending = [s for s in scripts_client.SCRIPTS if s.get("ok") and not s.get("applied")]
        if not pending:
            layout.label(text="None pending", icon="INFO")
        for entry in pending:
            box = layout.box().column(align=True)
            box.label(text="%s  (%s lines)" % (entry.get("script_id", "?"), entry.get("lines", "?")), icon="TEXT")
            box.label(text="sha256 %s…" % str(entry.get("sha256", ""))[:16], icon="BLANK1")
            op = box.operator("blendmq.script_apply", icon="CHECKMARK")
            op.script_id = entry.get("script_id", "")
            op.sha256 = str(entry.get("sha256", ""))
        if scripts_client.MESSAGE:
            s_wrapped(layout, scripts_client.MESSAGE, s_chars(context), icon="INFO")


CLASSES = (BLENDMQ_PG_ui, BLENDMQ_OT_server_start, BLENDMQ_OT_server_stop, BLENDMQ_OT_token_new,
           BLENDMQ_OT_token_copy, BLENDMQ_OT_send_prompt, BLENDMQ_OT_cancel_plan, BLENDMQ_OT_scripts_refresh,
           BLENDMQ_OT_script_apply,
           VIEW3D_PT_blendmq, VIEW3D_PT_blendmq_settings,
           VIEW3D_PT_blendmq_prompt, VIEW3D_PT_blendmq_scripts)


def register():
    for cls in settings.CLASSES + CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.WindowManager.blendmq = PointerProperty(type=BLENDMQ_PG_ui)


def unregister():
    del bpy.types.WindowManager.blendmq
    for cls in reversed(settings.CLASSES + CLASSES):
        bpy.utils.unregister_class(cls)
