#!/usr/bin/env bash
# deploy.container: lint deploy/container/Containerfile without building it
# (no container engine is needed or used).
#   test_container.sh SRC_DIR BIN_DIR
# Debian bookworm bases only; the build stage installs deploy/install-deps.sh's
# list by running it; every package either stage installs exists in Debian
# (apt-cache); the runtime stage installs the package of every shared library
# the built binaries link directly; COPY sources exist; a non-root USER; one
# entrypoint that knows every service.
set -uo pipefail
src="$1"; bindir="$2"
cf="$src/deploy/container/Containerfile"; ep="$src/deploy/container/entrypoint.sh"
fails=0; checks=0
fail () { echo "FAIL: $*"; fails=$((fails + 1)); }
ok () { checks=$((checks + 1)); }
[ -f "$cf" ] || { echo "FAIL: no $cf"; exit 1; }
# logical lines: continuations joined
lines=$(sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta' "$cf" | grep -vE '^\s*(#|$)')

froms=$(grep -E '^FROM ' <<<"$lines" | awk '{print $2}')
[ "$(wc -l <<<"$froms")" -ge 2 ] && ok || fail "want a build and a runtime stage"
while read -r f; do
  [[ "$f" =~ ^(docker\.io/library/)?debian:bookworm(-slim)?$ ]] && ok || fail "base image $f is not Debian bookworm"
done <<<"$froms"

build=$(awk '/^FROM /{n++} n==1' <<<"$lines"); runtime=$(awk '/^FROM /{n++} n>=2' <<<"$lines")
grep -q 'deploy/install-deps.sh' <<<"$(grep '^RUN' <<<"$build")" && ok || fail "build stage does not run deploy/install-deps.sh"
grep -q 'deploy/build.sh' <<<"$build" && ok || fail "build stage does not build with deploy/build.sh"

# packages: install-deps.sh's list (what the build stage gets) and every apt-get install in the file
deps=$(sed -n '/^PKGS=(/,/)/p' "$src/deploy/install-deps.sh" | tr -d '()' | sed 's/PKGS=//' | tr -s ' \n' '\n' | grep -v '^$')
rt=$(grep -oE 'apt-get install [^&;]*' <<<"$runtime" | sed 's/apt-get install//' | tr ' ' '\n' | grep -vE '^(-|$)')
[ "$(wc -w <<<"$deps")" -ge 10 ] && ok || fail "could not read install-deps.sh's package list"
[ "$(wc -w <<<"$rt")" -ge 10 ] && ok || fail "could not read the runtime stage's package list"
for p in $deps $rt; do
  info=$(apt-cache show --no-all-versions "$p" 2>/dev/null)
  if grep -q "^Package: $p\$" <<<"$info"; then ok
  else fail "package $p: not in this machine's Debian package lists (apt-cache show; run apt-get update if the lists are empty)"; fi
done
grep -q 'apt-get install' <<<"$build" && fail "build stage installs packages outside install-deps.sh" || ok

# the runtime stage has the package of every library the services link directly
for b in blendmq blendmq-gateway blendmq-planner blendmq-validator blendmq-executor blendmq-audit; do
  [ -x "$bindir/$b" ] || { fail "$bindir/$b not built"; continue; }
  for lib in $(readelf -d "$bindir/$b" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    path=$(ldd "$bindir/$b" | awk -v l="$lib" '$1==l {print $3}')
    pkg=""
    for cand in "$path" "/usr$path" "${path#/usr}"; do
      [ -n "$pkg" ] || pkg=$(dpkg -S "$cand" 2>/dev/null | head -1 | cut -d: -f1)
    done
    case "$lib" in libasan.so*|libubsan.so*|liblsan.so*|libtsan.so*) continue;; esac   # a sanitizer build; the image builds without
    case "$pkg" in libc6|libgcc-s1|"") [ -n "$pkg" ] && ok || fail "$b: no package owns $lib";;
      *) grep -qx "$pkg" <<<"$rt" && ok || fail "$b links $lib ($pkg) which the runtime stage does not install";; esac
  done
done
for p in bubblewrap blender; do grep -qx "$p" <<<"$rt" && ok || fail "runtime stage lacks $p"; done

# COPY sources (not --from) exist in the tree; data dirs the build stage copies exist
while read -r c; do
  set -- $c; shift
  [[ "$1" == --from=* ]] && continue
  while [ $# -gt 1 ]; do [ -e "$src/$1" ] && ok || fail "COPY source $1 missing"; shift; done
done < <(grep -E '^COPY ' <<<"$lines")
for d in $(grep -oE 'for d in [^;]*' <<<"$build" | sed 's/for d in //') deploy/blendmq.yaml deploy/container/entrypoint.sh; do
  [ -e "$src/$d" ] && ok || fail "data path $d missing"
done

# non-root: the last USER is a non-zero uid or a name other than root
user=$(grep -E '^USER ' <<<"$runtime" | tail -1 | awk '{print $2}')
u="${user%%:*}"
[ -n "$u" ] && [ "$u" != root ] && [ "$u" != 0 ] && ok || fail "runtime stage does not switch to a non-root USER ('$user')"
grep -qE '^ENTRYPOINT \["/usr/local/bin/blendmq-entrypoint"\]' <<<"$runtime" && ok || fail "no ENTRYPOINT"
sh -n "$ep" && ok || fail "entrypoint.sh does not parse"
# every service of common/service_registry.def: blendmq-NAME for any NAME (deploy.services checks
# the image copies each binary), and Blender
grep -qF '"/usr/local/bin/blendmq-$what" --config "$config"' "$ep" && ok || fail "entrypoint does not run blendmq-NAME for its first argument"
grep -qE '(^|[ |])blender([ |)])' "$ep" && ok || fail "entrypoint does not know blender"
echo "$checks passed, $fails failed"
[ $fails -eq 0 ] && [ $checks -gt 40 ]
