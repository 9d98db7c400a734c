#!/bin/sh
# own-keys.sh NAME [KEYS_DIR]: as root, on the machine of a service that runs as a user of
# its own (BMQ_SERVICE_USER in common/service_registry.def: the audit, user blendmq-audit),
# fill its keys dir /etc/blendmq/keys-NAME (0700, owner that user; its unit points
# security.keys_dir there): its NAME.cert_secret and NAME.cert, MOVED out of KEYS_DIR
# (default /etc/blendmq/keys, where `blendmq keys init` made them: the blendmq user can
# no longer read the secret), and a copy of KEYS_DIR/trusted (the public certs it accepts).
# Run it again after `keys add-client` or `keys revoke` in KEYS_DIR: trusted/ is synced
# in place (added certs copied, removed ones deleted; the service reloads the folder).
set -eu
name="${1:?usage: own-keys.sh NAME [KEYS_DIR]}"
keys="${2:-/etc/blendmq/keys}"
here="$(cd "$(dirname "$0")" && pwd)"
case "$name" in ''|*[!a-z0-9_-]*) echo "own-keys.sh: bad service name '$name'" >&2; exit 2;; esac
unit=/etc/systemd/system/blendmq-$name.service
[ -f "$unit" ] || unit="$here/blendmq-$name.service"
user="$(sed -n 's/^User=//p' "$unit" 2>/dev/null | head -1)"
group="$(sed -n 's/^Group=//p' "$unit" 2>/dev/null | head -1)"
if [ -z "$user" ] || [ "$user" = blendmq ]; then
  echo "own-keys.sh: $unit runs as '${user:-?}', not a user of its own" >&2; exit 2
fi
own="${BMQ_OWN_KEYS_DIR:-/etc/blendmq/keys-$name}"    # (the variable: for a test)
[ -d "$keys/trusted" ] || { echo "own-keys.sh: no $keys/trusted (blendmq --keys-dir $keys keys init)" >&2; exit 1; }
install -d -m 0700 -o "$user" -g "${group:-$user}" "$own" "$own/trusted"
for f in "$name.cert_secret" "$name.cert"; do
  if [ -f "$keys/$f" ]; then install -m 0600 -o "$user" -g "${group:-$user}" "$keys/$f" "$own/$f"; fi
done
[ -f "$own/$name.cert_secret" ] || { echo "own-keys.sh: no $name.cert_secret in $keys or $own" >&2; exit 1; }
if [ -f "$keys/$name.cert_secret" ]; then shred -u "$keys/$name.cert_secret" 2>/dev/null || rm -f "$keys/$name.cert_secret"; fi
for c in "$keys"/trusted/*.cert; do
  if [ -f "$c" ]; then install -m 0600 -o "$user" -g "${group:-$user}" "$c" "$own/trusted/"; fi
done
for c in "$own"/trusted/*.cert; do
  if [ -f "$c" ] && [ ! -f "$keys/trusted/$(basename "$c")" ]; then rm -f "$c"; fi
done
echo "own-keys.sh: $own ($user): $name.cert_secret and $(ls "$own/trusted" | wc -l) trusted cert(s)"
