#!/bin/sh
# The image's entrypoint: the first argument names the service.
#   NAME [ARGS]             blendmq-NAME --config $BLENDMQ_CONFIG ARGS, for every service of
#                           common/service_registry.def (the image has its binary; ctest
#                           deploy.services checks the image copies each one)
#   blender [ADDON ARGS]    headless Blender with the blendmq add-on
#   anything else           the blendmq CLI (blendmq keys init, status, ...)
set -eu
config="${BLENDMQ_CONFIG:-/etc/blendmq/blendmq.yaml}"
what="${1:---help}"
case "$what" in
  blender)
    shift
    [ $# -gt 0 ] || set -- --host 127.0.0.1 --port 9876 --token-file /etc/blendmq/keys/blender.token --reset-scene
    # the script sandbox's limits and hash seed (issue 23); the pod is the rest of the
    # confinement (`blendmq blender-run` needs user namespaces and a unix socket)
    export PYTHONHASHSEED=0
    ulimit -v 4194304 2>/dev/null || true
    ulimit -c 0 2>/dev/null || true
    exec /usr/bin/blender -b --factory-startup \
      --python "${BLENDMQ_DATA_DIR:-/usr/local/share/blendmq}/services/executor/addon/blendmq_addon.py" -- "$@" ;;
  entrypoint|*[!a-z]*) ;;
  *)
    if [ -x "/usr/local/bin/blendmq-$what" ]; then
      shift
      exec "/usr/local/bin/blendmq-$what" --config "$config" "$@"
    fi ;;
esac
exec /usr/local/bin/blendmq "$@"
