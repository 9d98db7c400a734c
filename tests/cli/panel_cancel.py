"""Run inside Blender (tests/cli/test_cli_stop.py): the add-on panel's Cancel request, as its
operator sends it, for one plan. argv after --: ADDON_DIR BASE_URL TOKEN_FILE PLAN_ID.
Prints the panel's message as "PANEL: ..."."""
import sys

addon, base, token_file, plan_id = sys.argv[sys.argv.index("--") + 1:][:4]
sys.path.insert(0, addon)
from blendmq import panel  # noqa: E402  (the add-on package, not registered: only its request is used)

token = open(token_file).read().strip()
panel.CANCEL.update(plan_id=plan_id, message="")
panel.s_cancel_request(base, token, plan_id)
print("PANEL: " + panel.CANCEL["message"], flush=True)
