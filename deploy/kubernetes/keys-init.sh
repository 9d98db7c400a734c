#!/bin/sh
# keys-init: copy this pod's Secrets (mounted under /secrets/NAME, as symlinks)
# into a real keys dir (0700 directory, 0600 files) on a memory emptyDir:
#   /secrets/public/*  -> /run/blendmq/keys/trusted/ and /run/blendmq/keys/ (public certs)
#   /secrets/*/*       -> /run/blendmq/keys/ (this service's NAME.cert + NAME.cert_secret, shared secrets)
set -eu
umask 077
k=/run/blendmq/keys
mkdir -p "$k/trusted"
chmod 0700 "$k" "$k/trusted"
for d in /secrets/*; do
  [ -d "$d" ] || continue
  for f in "$d"/*; do
    [ -f "$f" ] || continue
    if [ "$(basename "$d")" = public ]; then cp -L "$f" "$k/trusted/"; fi
    cp -L "$f" "$k/"
  done
done
chmod 0600 "$k"/* "$k"/trusted/* 2>/dev/null || true
chmod 0700 "$k/trusted"
ls -l "$k" "$k/trusted"
