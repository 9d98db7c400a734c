"""settings — the add-on's preferences (shown in Preferences → Add-ons → blendmq and in the
panel) and what they resolve to, after the environment's say:

  BLENDMQ_HOST, BLENDMQ_PORT      where the server listens (port 0: any free port)
  BLENDMQ_TOKEN                   the token itself (else the token file is used)
  BLENDMQ_TOKEN_FILE              the token file (else the setting, else <config>/blendmq_token)
  BLENDMQ_GATEWAY_URL             the gateway's HTTP address for prompts
  BLENDMQ_GATEWAY_TOKEN           the gateway token itself (else the setting, else the token file)
  BLENDMQ_GATEWAY_TOKEN_FILE      the gateway token's file (else the setting, else
                                  <run dir>/keys/panel.token: the `panel` client that `blendmq keys init`
                                  makes, role admin, when the panel runs on the stack's machine)
  BLENDMQ_ALLOW_PLAIN_REMOTE      "1": serve an executor that is not on loopback (the link is
                                  authenticated and every frame MAC'd, but not encrypted)
  BLENDMQ_RUN_DIR                 the run dir, as for the blendmq command (else $XDG_RUNTIME_DIR/blendmq,
                                  else /tmp/blendmq-UID)
"""
import os

import bpy
from bpy.props import BoolProperty, IntProperty, StringProperty

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 9876
DEFAULT_GATEWAY = "http://127.0.0.1:7780"


def default_token_file():
    return os.path.join(bpy.utils.user_resource("CONFIG"), "blendmq_token")


def default_run_dir():
    """Where `blendmq` keeps the running stack's files, as the command finds it."""
    env = os.environ.get("BLENDMQ_RUN_DIR", "").strip()
    if env:
        return env
    xdg = os.environ.get("XDG_RUNTIME_DIR", "").strip()
    return os.path.join(xdg, "blendmq") if xdg else "/tmp/blendmq-%d" % os.getuid()


def default_gateway_token_file():
    return os.path.join(default_run_dir(), "keys", "panel.token")


def read_token_file(path):
    """The token in `path` (stripped), or "" when it cannot be read. Read on each use, so a
    revoked or replaced token is noticed without restarting Blender."""
    try:
        with open(path, "r", encoding="ascii") as f:
            return f.read(512).strip()
    except (OSError, UnicodeDecodeError):
        return ""


class BLENDMQ_AP_preferences(bpy.types.AddonPreferences):
    bl_idname = __package__

    host: StringProperty(
        name="Host", default=DEFAULT_HOST,
        description="Address the add-on listens on for the executor (keep it on loopback unless the executor runs elsewhere)")
    port: IntProperty(
        name="Port", default=DEFAULT_PORT, min=0, max=65535,
        description="TCP port the executor connects to (blender.port); 0 picks any free port")
    token_file: StringProperty(
        name="Token file", subtype="FILE_PATH", default="",
        description="The shared token's file (blender.token_file), generated when missing; "
                    "empty: blendmq_token in Blender's config folder")
    autostart: BoolProperty(
        name="Start when enabled", default=True,
        description="Listen as soon as the add-on is enabled (also when Blender starts)")
    gateway_url: StringProperty(
        name="Gateway", default=DEFAULT_GATEWAY,
        description="The blendmq gateway's HTTP address (gateway.http_bind and gateway.http_port)")
    gateway_token: StringProperty(
        name="Gateway token", subtype="PASSWORD", default="",
        description="Bearer token for the gateway (every route needs one); empty: read from the gateway token file")
    gateway_token_file: StringProperty(
        name="Gateway token file", subtype="FILE_PATH", default="",
        description="File holding the gateway token; empty: <run dir>/keys/panel.token (made by `blendmq keys init` "
                    "or `blendmq up`), for a panel on the stack's machine")

    def draw(self, context):
        col = self.layout.column()
        for prop in ("host", "port", "token_file", "autostart", "gateway_url", "gateway_token", "gateway_token_file"):
            col.prop(self, prop)


class Settings:
    """What the add-on uses now; `overrides` names the environment variables that applied."""

    def __init__(self, prefs):
        self.prefs = prefs
        get = (lambda k, d: getattr(prefs, k)) if prefs is not None else (lambda k, d: d)
        self.overrides = []
        self.host = self._env("BLENDMQ_HOST", get("host", DEFAULT_HOST))
        port = self._env("BLENDMQ_PORT", get("port", DEFAULT_PORT))
        try:
            self.port = int(port)
        except ValueError:
            self.port = DEFAULT_PORT
        self.token_file = self._env("BLENDMQ_TOKEN_FILE", get("token_file", "") or default_token_file())
        self.token_file = bpy.path.abspath(self.token_file) if self.token_file.startswith("//") else self.token_file
        self.gateway_url = self._env("BLENDMQ_GATEWAY_URL", get("gateway_url", DEFAULT_GATEWAY)).rstrip("/")
        self.gateway_token = self._env("BLENDMQ_GATEWAY_TOKEN", get("gateway_token", "")).strip()
        self.gateway_token_file = ""
        if not self.gateway_token:
            path = self._env("BLENDMQ_GATEWAY_TOKEN_FILE", get("gateway_token_file", "") or default_gateway_token_file())
            self.gateway_token_file = bpy.path.abspath(path) if path.startswith("//") else path
            self.gateway_token = read_token_file(self.gateway_token_file)
        self.autostart = get("autostart", True)
        self.allow_plain_remote = self._env("BLENDMQ_ALLOW_PLAIN_REMOTE", "") in ("1", "true", "yes")
        if os.environ.get("BLENDMQ_TOKEN", "").strip():
            self.overrides.append("BLENDMQ_TOKEN")

    def _env(self, name, value):
        env = os.environ.get(name, "").strip()
        if env:
            self.overrides.append(name)
            return env
        return value


def preferences():
    addon = bpy.context.preferences.addons.get(__package__)
    return addon.preferences if addon is not None else None


def current():
    return Settings(preferences())


CLASSES = (BLENDMQ_AP_preferences,)
