#!/bin/sh
# The Blender the Blender-facing tests run (issue 30): BLENDMQ_BLENDER when set (deploy/test.sh
# sets it to each of /opt/blendmq/blender-X.Y/blender in turn), else `blender` on the PATH.
# CMake registers the tests with this script instead of the path it found at configure time,
# so one build runs them on every Blender.
case "${BLENDMQ_BLENDER:-}" in
  ""|*/tests/blender.sh) exec blender "$@" ;;
  *) exec "$BLENDMQ_BLENDER" "$@" ;;
esac
