"""stack_env — what a Python test of a real stack (`blendmq up --ipc`, a confined headless
Blender) sets up first: the blendmq binary, the Blender, a private 0700 run dir in a fresh
work folder, and an environment with no BLENDMQ_* override but BLENDMQ_BLENDER. Without
Blender or a working bubblewrap the test is skipped (exit 77, ctest's SKIP_RETURN_CODE)."""
import os
import shutil
import subprocess
import sys
import tempfile


def prepare(bin_dir, prefix):
    """(BIN, blender, work, run_dir, env), or exit 77 with the reason."""
    blender = os.environ.get("BLENDMQ_BLENDER", "blender")
    if not shutil.which(blender):
        print("skipped: no Blender")
        sys.exit(77)
    if subprocess.run(["bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "/bin/true"],
                      capture_output=True).returncode != 0:
        print("skipped: bubblewrap cannot run here")
        sys.exit(77)
    work = tempfile.mkdtemp(prefix=prefix)
    run_dir = os.path.join(work, "run")
    os.mkdir(run_dir, 0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLENDMQ_")}
    if "BLENDMQ_BLENDER" in os.environ:
        env["BLENDMQ_BLENDER"] = os.environ["BLENDMQ_BLENDER"]
    return os.path.join(bin_dir, "blendmq"), blender, work, run_dir, env
