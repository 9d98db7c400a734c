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


class Stack:
    """A test's handle on its private stack: prepare() done, plus the helpers the stack tests
    share (the CLI run to its end or started in the background, a named check, the scene)."""

    def __init__(self, bin_dir, prefix, cli_timeout=120):
        self.bin, self.blender, self.work, self.run_dir, self.env = prepare(bin_dir, prefix)
        self.cli_timeout = cli_timeout
        self.failures = []

    def cli(self, *args, timeout=None):
        """(exit code, stdout, stderr) of `blendmq --run-dir R ARGS`."""
        p = subprocess.run([self.bin, "--run-dir", self.run_dir] + list(args), capture_output=True, text=True,
                           env=self.env, timeout=timeout or self.cli_timeout)
        return p.returncode, p.stdout, p.stderr

    def check(self, name, ok, detail=""):
        print(("ok    " if ok else "FAIL  ") + name + (f": {detail}" if detail else ""), flush=True)
        if not ok:
            self.failures.append(name)

    def scene(self):
        """(objects sorted by name, floats to 4 places; the scene's fingerprint)."""
        import json
        rc, out, err = self.cli("scene")
        assert rc == 0, err
        objects = json.loads(out)["objects"]
        rounded = json.loads(json.dumps(objects), parse_float=lambda s: round(float(s), 4))
        rc, digest, err = self.cli("scene", "fingerprint")
        return sorted(rounded, key=lambda o: o["name"]), digest.strip()

    def start(self, *args, tag="run"):
        """The CLI in the background, its output in files: (process, out, err)."""
        out = open(os.path.join(self.work, f"{tag}-out.txt"), "w+")
        err = open(os.path.join(self.work, f"{tag}-err.txt"), "w+")
        p = subprocess.Popen([self.bin, "--run-dir", self.run_dir] + list(args), stdout=out, stderr=err, env=self.env)
        return p, out, err

    @staticmethod
    def ended(p, out, err, limit=120):
        """(exit code, stdout, stderr) once p ends (killed after limit s)."""
        try:
            rc = p.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = p.wait()
        out.seek(0)
        err.seek(0)
        return rc, out.read(), err.read()
