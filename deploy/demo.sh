#!/usr/bin/env bash
# blendmq demo: install what is missing, build, start the whole stack with a
# headless Blender, run the prompt, write out/NAME.blend and out/NAME.png, stop.
#   deploy/demo.sh "build a snowman" [--out DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: deploy/demo.sh \"PROMPT\" [--out DIR]" >&2; exit 2; }
deploy/install-deps.sh
echo "building..." >&2
deploy/build.sh
exec build/bin/blendmq demo "$@"
