#!/bin/sh
# The Blender the Blender-facing tests run (issue 30): BLENDMQ_BLENDER when set (deploy/test.sh
# sets it to each of /opt/blendmq/blender-X.Y/blender in turn), else `blender` on the PATH.
# CMake registers the tests with this script instead of the path it found at configure time,
# so one build runs them on every Blender.
# No Blender at all: exit 77 (the tests register SKIP_RETURN_CODE 77: skipped, with this reason).
case "${BLENDMQ_BLENDER:-}" in
  ""|*/tests/blender.sh)
    command -v blender >/dev/null 2>&1 || {
      echo "SKIPPED: no blender on PATH and BLENDMQ_BLENDER is not set (deploy/install-deps.sh installs Blender)"; exit 77; }
    exec blender "$@" ;;
  *) exec "$BLENDMQ_BLENDER" "$@" ;;
esac
