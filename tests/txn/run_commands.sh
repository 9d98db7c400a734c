#!/bin/bash
# txn.commands_VERSION: every link command once on Blender VERSION (issue 30; check_commands.py).
#   run_commands.sh VERSION SOURCE_DIR
# 3.4 is this machine's Blender (Debian 12's /usr/bin/blender); 4.3 and 5.2 run in the
# roots deploy/blender-roots.sh builds (BLENDMQ_BLENDERS_DIR, default /opt/blendmq:
# blender-X.Y/blender). A Blender that is not here: exit 77, saying which and how to get it.
set -u
VERSION="$1" SRC="$2"
case "$VERSION" in
  3.4) BLENDER=/usr/bin/blender          # not the PATH's: deploy/test.sh's per-version passes put another first
       [ -x "$BLENDER" ] || { echo "skip: no Blender 3.4 at $BLENDER (Debian 12: apt-get install blender)"; exit 77; } ;;
  *)   BLENDER="${BLENDMQ_BLENDERS_DIR:-/opt/blendmq}/blender-$VERSION/blender"
       [ -x "$BLENDER" ] || { echo "skip: no Blender $VERSION root: $BLENDER is missing (deploy/blender-roots.sh, run by deploy/install-deps.sh --test, builds it)"; exit 77; } ;;
esac
echo "Blender $VERSION: $BLENDER"
exec "$BLENDER" -b --factory-startup --python-exit-code 1 --python "$SRC/tests/txn/check_commands.py" -- \
     "$SRC/services/executor/addon" "$SRC/proto/palette.yaml" "$VERSION"
