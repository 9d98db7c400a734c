#!/bin/bash
# deploy.own_keys: deploy/systemd/own-keys.sh gives a service of its own user (the audit) a
# keys dir the `blendmq` user cannot read, and the audit runs from it as that user:
#  - after `keys init`, own-keys.sh moves audit.cert_secret out of the shared keys dir into
#    the audit's (0700 dir, 0600 files, owned by the unit's User=/Group=), copies trusted/;
#  - after `keys add-client` / `keys revoke` it syncs trusted/ (added, then removed);
#  - blendmq-audit, run as that user with only that keys dir (BLENDMQ_SECURITY_KEYS_DIR, as
#    its unit sets it) and its database in a 0700 state dir of its own, answers a CURVE
#    client (`blendmq audit verify`), and another uid cannot read its key, secret or database.
# As root only (it creates files owned by another user: exit 77 otherwise); the audit's user
# is `nobody` here (the real one, blendmq-audit, is not on a build machine).
#   test_own_keys.sh SRC BIN_DIR
set -u
src="$1"; bin="$(cd "$2" && pwd)"
[ "$(id -u)" = 0 ] || { echo "SKIPPED: needs root (files owned by another user)"; exit 77; }
command -v setpriv >/dev/null || { echo "SKIPPED: setpriv (util-linux) is not installed"; exit 77; }
id nobody >/dev/null 2>&1 || { echo "SKIPPED: no user nobody"; exit 77; }
other=daemon; id "$other" >/dev/null 2>&1 || { echo "SKIPPED: no user $other"; exit 77; }
group="$(id -gn nobody)"
pass=0; fails=0
ok () { pass=$((pass + 1)); }
fail () { fails=$((fails + 1)); echo "FAIL: $*"; }
T="$(mktemp -d)"; pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$T"' EXIT
chmod 755 "$T"
mkdir -p "$T/sd" "$T/keys" "$T/state" "$T/run"; chmod 700 "$T/keys"
cp "$src/deploy/systemd/own-keys.sh" "$T/sd/"
printf '[Service]\nUser=nobody\nGroup=%s\n' "$group" > "$T/sd/blendmq-audit.service"
"$bin/blendmq" --keys-dir "$T/keys" keys init >/dev/null 2>&1 || { fail "keys init"; exit 1; }
own="$T/own"
export BMQ_OWN_KEYS_DIR="$own"
sh "$T/sd/own-keys.sh" audit "$T/keys" && ok || fail "own-keys.sh audit exited $?"
[ ! -e "$T/keys/audit.cert_secret" ] && ok || fail "audit.cert_secret is still in the shared keys dir"
[ "$(stat -c '%a %U' "$own")" = "700 nobody" ] && ok || fail "own keys dir: $(stat -c '%a %U' "$own"), want 700 nobody"
[ "$(stat -c '%a %U' "$own/audit.cert_secret")" = "600 nobody" ] && ok || fail "audit.cert_secret: $(stat -c '%a %U' "$own/audit.cert_secret")"
[ "$(ls "$own/trusted")" = "$(ls "$T/keys/trusted")" ] && ok || fail "trusted/ differs from the shared one"
[ -z "$(ls "$own" | grep -v '^audit\.cert' | grep -vx trusted)" ] && ok || fail "more than the audit's own keys: $(ls "$own")"
"$bin/blendmq" --keys-dir "$T/keys" keys add-client alice --role operator >/dev/null 2>&1 || fail "keys add-client"
sh "$T/sd/own-keys.sh" audit "$T/keys" >/dev/null && [ -f "$own/trusted/alice.cert" ] && ok || fail "add-client: alice.cert not synced"
"$bin/blendmq" --keys-dir "$T/keys" keys revoke alice >/dev/null 2>&1 || fail "keys revoke"
sh "$T/sd/own-keys.sh" audit "$T/keys" >/dev/null && [ ! -e "$own/trusted/alice.cert" ] && ok || fail "revoke: alice.cert still trusted"
# a unit that runs as the shared user is refused
printf '[Service]\nUser=blendmq\n' > "$T/sd/blendmq-planner.service"
sh "$T/sd/own-keys.sh" planner "$T/keys" 2>/dev/null; [ $? -eq 2 ] && ok || fail "own-keys.sh planner (User=blendmq) was not refused"

# the audit, as nobody, from its own keys dir and state dir
chown nobody:"$group" "$T/state" "$T/run"; chmod 700 "$T/state" "$T/run"
printf 'security: {curve: true, keys_dir: %s}\naudit: {endpoint: "ipc://%s/audit.sock", spool_dir: %s/spool}\n' "$T/keys" "$T/run" "$T" > "$T/cfg.yaml"
chmod 644 "$T/cfg.yaml"
(cd "$T/state" && exec env BLENDMQ_SECURITY_KEYS_DIR="$own" BLENDMQ_AUDIT_DATABASE="$T/state/blendmq-audit.db" \
   setpriv --reuid=nobody --regid="$group" --clear-groups "$bin/blendmq-audit" --config "$T/cfg.yaml") > "$T/audit.log" 2>&1 &
pid=$!
for _ in $(seq 50); do [ -S "$T/run/audit.sock" ] && break; sleep 0.1; done
out="$(timeout 20 "$bin/blendmq" --config "$T/cfg.yaml" --keys-dir "$T/keys" --key cli audit verify 2>&1)"
[[ "$out" == "audit ok:"* ]] && ok || { fail "audit verify against the audit as nobody: $out"; cat "$T/audit.log"; }
[ "$(stat -c %U "$T/state/blendmq-audit.db.key")" = nobody ] && ok || fail "the HMAC key is not the audit user's"
for f in "$own/audit.cert_secret" "$T/state/blendmq-audit.db.key" "$T/state/blendmq-audit.db"; do
  if [ ! -e "$f" ]; then fail "$f missing"
  elif setpriv --reuid="$other" --regid="$other" --clear-groups cat "$f" >/dev/null 2>&1; then fail "uid $other reads $f"
  else ok; fi
done
echo "deploy.own_keys: $pass passed, $fails failed"
[ $fails -eq 0 ]
