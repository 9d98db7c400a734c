/* blender_root — a Blender installed in a root of its own (issue 30).
 *
 * deploy/blender-roots.sh installs Debian's newer Blenders into debootstrap roots and
 * writes, per version, BLENDERS_DIR/blender-X.Y/blender (a wrapper that runs the root's
 * /usr/bin/blender under bubblewrap) next to BLENDERS_DIR/blender-X.Y/root (a link to the
 * root). Whoever builds a bwrap tree of its own for Blender (the script sandbox) must not
 * run the wrapper (bwrap in bwrap, and the host's /usr): it takes /usr and the /etc files
 * from the root and runs /usr/bin/blender there, so the sandbox runs the very install the
 * live Blender runs. */
#ifndef BMQ_BLENDER_ROOT_H
#define BMQ_BLENDER_ROOT_H

#include <stdbool.h>
#include <stddef.h>

/* The Blender inside a root, at the same path in every root. */
#define BMQ_BLENDER_ROOT_EXE "/usr/bin/blender"

/* True when `blender` (a path, or a name looked up on PATH) is such a wrapper: its
 * folder holds `root`, a folder with an executable usr/bin/blender; `root` gets that
 * folder's real path. False (root "") for any other Blender. */
bool bmq_blender_root (const char *blender, char *root, size_t rootlen);

#endif
