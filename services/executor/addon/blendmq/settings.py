"""settings — the add-on's preferences (shown in Preferences → Add-ons → blendmq and in the
panel) and what they resolve to, after the environment's say:

  BLENDMQ_HOST, BLENDMQ_PORT      where the server listens (port 0: any free port)
  BLENDMQ_TOKEN                   the token itself (else the token file is used)
  BLENDMQ_TOKEN_FILE              the token file (else the setting, else <config>/blendmq_token)
  BLENDMQ_GATEWAY_URL             the gateway's HTTP address for prompts
"""
import os

import bpy
from bpy.props import BoolProperty, IntProperty, StringProperty

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 9876
DEFAULT_GATEWAY = "http://127.0.0.1:7780"


def default_token_file():
    return os.path.join(bpy.utils.user_resource("CONFIG"), "blendmq_token")


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
        description="Bearer token, when the gateway requires one (gateway.http_token)")

    def draw(self, context):
        col = self.layout.column()
        for prop in ("host", "port", "token_file", "autostart", "gateway_url", "gateway_token"):
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
        self.gateway_token = get("gateway_token", "")
        self.autostart = get("autostart", True)
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
