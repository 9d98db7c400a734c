#!/usr/bin/env bash
# Newer Blenders for the tests (issue 30): Debian trixie's Blender 4.3 and sid's 5.2, each
# in a minimal debootstrap root, run under bubblewrap with the host's kernel, network and
# paths. deploy/install-deps.sh --test runs this; deploy/test.sh then runs the
# Blender-facing tests on each (BLENDMQ_BLENDER=<wrapper>).
#
#   deploy/blender-roots.sh [SUITE...]     default: trixie sid
#
# BLENDMQ_ROOTS_DIR     where the roots are built and kept (default /var/cache/blendmq-roots);
#                       a root that has Blender installed is reused as it is (the cache)
# BLENDMQ_BLENDERS_DIR  where the wrappers go (default /opt/blendmq): BLENDERS_DIR/blender-X.Y/blender,
#                       with BLENDERS_DIR/blender-X.Y/root -> the root (the executor's sandbox
#                       reads that link: its bwrap root is the same Blender install as live)
# BLENDMQ_DEBIAN_MIRROR (default http://deb.debian.org/debian)
#
# Prints one line per root: `blender-roots: SUITE X.Y.Z WRAPPER size MB, built in S s|cached`.
# Needs root (debootstrap), debootstrap and bubblewrap.
set -euo pipefail
ROOTS="${BLENDMQ_ROOTS_DIR:-/var/cache/blendmq-roots}"
WRAPS="${BLENDMQ_BLENDERS_DIR:-/opt/blendmq}"
MIRROR="${BLENDMQ_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# libegl1 + libegl-mesa0: Blender 4.x's Workbench and EEVEE open an EGL context in background
# mode (4.3's first render aborts without libEGL.so.1), 5.2 also loads libGL.so.1 or libOpenGL.so.0;
# Debian's blender does not depend on them. python3-cattr, python3-requests: 5.x's extensions add-on imports them.
# python3-numpy: glTF import/export and look need it (Blender's own builds bundle it).
# python3-yaml: tests drive the add-on directly, which then reads proto/palette.yaml (as on the host).
PACKAGES=(blender libegl1 libegl-mesa0 libgl1 libopengl0 libgl1-mesa-dri python3-numpy python3-yaml python3-cattr python3-requests)
[ $# -gt 0 ] || set -- trixie sid
[ "$(id -u)" -eq 0 ] || { echo "blender-roots: needs root (debootstrap)" >&2; exit 1; }
for tool in debootstrap bwrap; do
  command -v "$tool" >/dev/null || { echo "blender-roots: $tool is not installed" >&2; exit 1; }
done
mkdir -p "$ROOTS" "$WRAPS"

# in_root ROOT CMD...: run CMD inside ROOT (its own /, /proc and /dev; the host's network)
in_root () {
  local r="$1"; shift
  bwrap --bind "$r" / --proc /proc --dev /dev --perms 1777 --tmpfs /tmp --ro-bind /etc/resolv.conf /etc/resolv.conf \
        --setenv DEBIAN_FRONTEND noninteractive --setenv PATH /usr/sbin:/usr/bin:/sbin:/bin "$@"
}

# The version of the Blender installed in ROOT (X.Y.Z), empty when none is.
root_blender_version () {
  [ -x "$1/usr/bin/blender" ] || return 0
  in_root "$1" dpkg-query -W -f='${Version}' blender 2>/dev/null | sed -E 's/^[0-9]+://; s/[+~-].*//'
}

build_root () {
  local suite="$1" r="$ROOTS/$1"
  rm -rf "$r.partial"
  # minbase, then apt inside: debootstrap's own resolver does not follow virtual packages
  # (sid's blender needs one during the OpenEXR transition) where apt does.
  debootstrap --variant=minbase "$suite" "$r.partial" "$MIRROR" >"$ROOTS/$suite.log" 2>&1 ||
    { echo "blender-roots: debootstrap $suite failed (see $ROOTS/$suite.log)" >&2; return 1; }
  install_packages "$r.partial" "$suite" || return 1
  mv "$r.partial" "$r"
}

install_packages () {
  # a frozen mirror serves Release files past their Valid-Until: still the archive's own signatures
  local apt=(apt-get -o Acquire::Check-Valid-Until=false -o Dpkg::Use-Pty=0)
  if ! in_root "$1" sh -c "${apt[*]} update -qq && ${apt[*]} install -y -qq --no-install-recommends ${PACKAGES[*]} && apt-get clean" \
        >>"$ROOTS/$2.log" 2>&1; then
    echo "blender-roots: installing ${PACKAGES[*]} into $2 failed (see $ROOTS/$2.log)" >&2
    return 1
  fi
}

write_wrapper () {
  local r="$1" ver="$2" dir
  dir="$WRAPS/blender-$(echo "$ver" | cut -d. -f1,2)"
  mkdir -p "$dir"
  ln -sfn "$r" "$dir/root"
  # The root is read-only; the host's own top-level folders (home, tmp, the project tree
  # wherever it is) are bound at their paths, so Blender sees the same files as a host
  # program. No shader cache: Mesa would write one into $HOME (and into a sandbox's).
  cat >"$dir/blender.tmp" <<EOF
#!/bin/bash
# Blender $ver from Debian's archive, in the root $r (deploy/blender-roots.sh).
R="\$(dirname "\$(readlink -f "\$0")")/root"
# already inside this root (a Blender that starts another Blender): that one is here too
[ "\${BLENDMQ_BLENDER_ROOT:-}" = "\$R" ] && exec /usr/bin/blender "\$@"
a=(--dev-bind /dev /dev --proc /proc --setenv BLENDMQ_BLENDER_ROOT "\$R"
   --setenv MESA_SHADER_CACHE_DISABLE true --setenv MESA_GLSL_CACHE_DISABLE true --die-with-parent)
for d in "\$R"/*; do            # the root's system tree, read-only (merged-/usr links as links)
  n="/\${d##*/}"
  case "\$n" in
    /proc|/dev|/sys) ;;
    /usr|/etc|/bin|/sbin|/lib|/lib32|/lib64|/libx32|/var|/boot)
      if [ -L "\$d" ]; then a+=(--symlink "\$(readlink "\$d")" "\$n"); else a+=(--ro-bind "\$d" "\$n"); fi ;;
  esac
done
a+=(--bind-try /var/tmp /var/tmp)
for d in /*; do                 # the host's own folders (home, tmp, the project tree), writable
  case "\$d" in
    /usr|/etc|/bin|/sbin|/lib|/lib32|/lib64|/libx32|/var|/boot|/proc|/sys|/dev) ;;
    *) [ -d "\$d" ] && [ ! -L "\$d" ] && a+=(--bind "\$d" "\$d") ;;
  esac
done
exec bwrap "\${a[@]}" -- /usr/bin/blender "\$@"
EOF
  chmod 755 "$dir/blender.tmp"
  mv "$dir/blender.tmp" "$dir/blender"
  echo "$dir/blender"
}

status=0
for suite in "$@"; do
  r="$ROOTS/$suite"
  start=$(date +%s)
  how=cached
  if [ -z "$(root_blender_version "$r")" ]; then
    echo "blender-roots: building $suite in $r (a few minutes; about 1.5 GB)" >&2
    rm -rf "$r"
    build_root "$suite" || { status=1; continue; }
    how="built in $(( $(date +%s) - start )) s"
  fi
  # a cached root made before a package joined PACKAGES gets it now
  if ! in_root "$r" dpkg-query -W -f='${Status}\n' "${PACKAGES[@]}" 2>/dev/null | grep -vq "^install ok installed$" ||
     [ "$(in_root "$r" dpkg-query -W -f='${Status}\n' "${PACKAGES[@]}" 2>/dev/null | wc -l)" != ${#PACKAGES[@]} ]; then
    install_packages "$r" "$suite" || { status=1; continue; }
  fi
  ver=$(root_blender_version "$r")
  [ -n "$ver" ] || { echo "blender-roots: no Blender in $r" >&2; status=1; continue; }
  wrapper=$(write_wrapper "$r" "$ver")
  got=$("$wrapper" -b --factory-startup --python-expr 'import bpy; print("BMQVER", bpy.app.version_string.split()[0])' 2>/dev/null | sed -n 's/^BMQVER //p')
  [ "$got" = "$ver" ] || { echo "blender-roots: $wrapper does not start Blender $ver (said '$got')" >&2; status=1; continue; }
  echo "blender-roots: $suite $ver $wrapper $(du -sm "$r/" | cut -f1) MB, $how"
done
exit $status
