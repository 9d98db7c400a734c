#!/usr/bin/env bash
# A plan whose link drops, rolled back on a GUI Blender's main thread (gui_drop_driver.py says
# what is checked), under Xvfb.   run_gui_drop.sh ADDON_ZIP
# Exit 0 pass, 1 fail, 77 skipped (no xvfb-run or Blender).
set -u
ZIP=$1
HERE=$(cd "$(dirname "$0")" && pwd)
BLENDER=${BLENDMQ_BLENDER:-blender}
command -v xvfb-run >/dev/null || { echo "skipped: xvfb-run not installed"; exit 77; }
command -v "$BLENDER" >/dev/null || { echo "skipped: no $BLENDER"; exit 77; }
[ -f "$ZIP" ] || { echo "no add-on zip at $ZIP (build the blendmq-addon-zip target)"; exit 1; }

WORK=$(mktemp -d /tmp/bmq-gui-drop-XXXXXX)
cleanup() { if [ "${KEEP:-0}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi; }
trap cleanup EXIT

# A private Blender user folder: installing the add-on must not touch the real one.
env -u BLENDMQ_TOKEN BLENDER_USER_SCRIPTS="$WORK/scripts" BLENDER_USER_CONFIG="$WORK/config" \
    BLENDMQ_PORT=0 BLENDMQ_TOKEN_FILE="$WORK/blender.token" \
    timeout 600 xvfb-run -a -s "-screen 0 1024x768x24" \
    "$BLENDER" --factory-startup --python "$HERE/gui_drop_driver.py" -- \
    --zip "$ZIP" --work "$WORK" > "$WORK/blender.log" 2>&1
rc=$?
grep "^gui-drop:" "$WORK/blender.log"
if grep -q '^ "ok": true' "$WORK/result.json" 2>/dev/null; then
    echo "gui drop test passed (Blender exit $rc)"
    exit 0
fi
echo "gui drop test FAILED (Blender exit $rc); the end of Blender's log:"
tail -60 "$WORK/blender.log"
exit 1
