#!/usr/bin/env bash
# The add-on in a real GUI Blender under Xvfb, through the whole stack (gui_driver.py says what
# is checked). Functional only: software GL under Xvfb is slow, nothing here is timed.
#   run_gui_test.sh BIN_DIR ADDON_ZIP
# Exit 0 pass, 1 fail, 77 skipped (no xvfb-run or Blender).
set -u
BIN_DIR=$1
ZIP=$2
HERE=$(cd "$(dirname "$0")" && pwd)
BLENDER=${BLENDMQ_BLENDER:-blender}
command -v xvfb-run >/dev/null || { echo "skipped: xvfb-run not installed (deploy/install-deps.sh --test)"; exit 77; }
command -v "$BLENDER" >/dev/null || { echo "skipped: no $BLENDER"; exit 77; }
# A Blender in a root of its own (deploy/blender-roots.sh: its wrapper sits next to root/) cannot
# start this machine's programs: the driver has host_relay.py run them here (issue 30)
ROOTED=0
[ -d "$(dirname "$(readlink -f "$(command -v "$BLENDER")")")/root" ] && ROOTED=1
[ -f "$ZIP" ] || { echo "no add-on zip at $ZIP (build the blendmq-addon-zip target)"; exit 1; }

WORK=$(mktemp -d /tmp/bmq-gui-XXXXXX)
RELAY_PID=
cleanup() {
    [ -n "$RELAY_PID" ] && kill "$RELAY_PID" 2>/dev/null
    "$BIN_DIR/blendmq" --run-dir "$WORK/run" down >/dev/null 2>&1
    if [ "${KEEP:-0}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

RELAY=
if [ $ROOTED = 1 ]; then
    RELAY="$WORK/relay.sock"
    /usr/bin/python3 "$HERE/host_relay.py" "$RELAY" & RELAY_PID=$!
    for _ in $(seq 1 50); do [ -S "$RELAY" ] && break; sleep 0.1; done
    [ -S "$RELAY" ] || { echo "host_relay.py did not start"; exit 1; }
fi
# A private Blender user folder: installing the add-on must not touch the real one.
env -u BLENDMQ_TOKEN BMQ_GUI_RELAY="$RELAY" BLENDER_USER_SCRIPTS="$WORK/scripts" BLENDER_USER_CONFIG="$WORK/config" \
    BLENDMQ_PORT=0 BLENDMQ_TOKEN_FILE="$WORK/blender.token" BMQ_GUI_LOG="$WORK/blender.log" \
    timeout 900 xvfb-run -a -s "-screen 0 1280x800x24" \
    "$BLENDER" --factory-startup --enable-event-simulate --python "$HERE/gui_driver.py" -- \
    --zip "$ZIP" --bin-dir "$BIN_DIR" --work "$WORK" > "$WORK/blender.log" 2>&1
rc=$?
grep "^gui-test:" "$WORK/blender.log"
# an ASan/UBSan build reports into the services' logs; any report fails the test
if grep -l -E "ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:" "$WORK"/run/logs/*.log 2>/dev/null; then
    echo "gui test FAILED: sanitizer reports in the logs above"
    grep -h -A20 -E "ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:" "$WORK"/run/logs/*.log | head -60
    exit 1
fi
if grep -q '^ "ok": true' "$WORK/result.json" 2>/dev/null; then
    [ -n "${BMQ_GUI_SHOTS:-}" ] && cp "$WORK"/panel*.png "$BMQ_GUI_SHOTS"/
    echo "gui test passed (Blender exit $rc)"
    exit 0
fi
echo "gui test FAILED (Blender exit $rc); the end of Blender's log:"
tail -60 "$WORK/blender.log"
for f in "$WORK"/run/logs/*.log; do [ -f "$f" ] && { echo "== $f"; tail -15 "$f"; }; done
exit 1
