#!/usr/bin/env bash
# Install a built blendmq (deploy/build.sh) for systemd, as root:
#   binaries   /usr/local/bin/blendmq, and blendmq-NAME for each unit blendmq-NAME[@].service here
#              (the services of common/service_registry.def: ctest deploy.services)
#   data       /usr/local/share/blendmq (BLENDMQ_DATA_DIR of every unit)
#   units      /etc/systemd/system/blendmq-*.service, blendmq.target
#   users      blendmq (every service but the audit) and blendmq-audit (the audit alone: its
#              HMAC key and database out of the others' reach) (sysusers.d); 0700, each its
#              user's: /etc/blendmq/keys, /var/lib/blendmq, /etc/blendmq/keys-audit,
#              /var/lib/blendmq-audit (tmpfiles.d)
#   own-keys   /usr/local/share/blendmq/deploy/own-keys.sh: `own-keys.sh audit` moves the audit's
#              secret key into /etc/blendmq/keys-audit and syncs its trusted/ (README, step 2)
#   config     /etc/blendmq/blendmq.yaml (kept when it exists)
# Nothing is enabled or started: see README, "Across machines".
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="$(cd "$here/../.." && pwd)"
bin="${BUILD_DIR:-$src/build}/bin"
prefix="${PREFIX:-/usr/local}"
services="$(cd "$here" && ls blendmq-*.service | sed 's/^blendmq-//; s/@\{0,1\}\.service$//' | grep -vx blender)"
for b in blendmq $(printf 'blendmq-%s ' $services); do
  [ -x "$bin/$b" ] || { echo "install.sh: $bin/$b missing: run deploy/build.sh first" >&2; exit 1; }
  install -D -m 0755 "$bin/$b" "$prefix/bin/$b"
done
data="$prefix/share/blendmq"
rm -rf "$data"
for d in proto prompts services/planner/recipes services/executor/addon services/executor/sandbox; do
  mkdir -p "$data/$d"
  cp -R "$src/$d/." "$data/$d/"
done
install -D -m 0644 "$src/deploy/blendmq.yaml" "$data/deploy/blendmq.yaml"
install -D -m 0644 "$src/README.md" "$data/README.md"
install -D -m 0755 "$here/own-keys.sh" "$data/deploy/own-keys.sh"
find "$data" -name __pycache__ -prune -exec rm -rf {} +

install -D -m 0644 "$here/blendmq.sysusers.conf" /usr/lib/sysusers.d/blendmq.conf
install -D -m 0644 "$here/blendmq.tmpfiles.conf" /usr/lib/tmpfiles.d/blendmq.conf
systemd-sysusers /usr/lib/sysusers.d/blendmq.conf
systemd-tmpfiles --create /usr/lib/tmpfiles.d/blendmq.conf
for u in "$here"/*.service "$here"/*.target; do install -m 0644 "$u" /etc/systemd/system/; done
[ -e /etc/blendmq/blendmq.yaml ] || install -m 0644 "$src/deploy/blendmq.yaml" /etc/blendmq/blendmq.yaml
systemctl daemon-reload 2>/dev/null || true
echo "installed; edit /etc/blendmq/blendmq.yaml, put keys in /etc/blendmq/keys (the audit's machine: then run"
echo "$data/deploy/own-keys.sh audit), then enable this machine's units"
