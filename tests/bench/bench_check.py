#!/usr/bin/python3
"""bench_check — one benchmark as a ctest test (label `bench`), so no bench can rot unseen.

  bench_check.py run NAME EXE [ARGS...]     run EXE (bin/bench_NAME) with ARGS (small counts);
                                            pass when it exits 0 and every line it printed on
                                            stdout is a metric line of bench NAME with a finite
                                            value, and there is at least one
  bench_check.py registered BIN_DIR NAME... every bin/bench_* executable is one of the NAMEs
                                            (a new bench that nobody registered fails here)

A metric line is a JSON object {"bench": NAME, "metric": str, "value": finite number, "unit":
str, ...}; NaN, Infinity, "(null)", a number that overflows a double, or any other text on
stdout fail the run, as does exit status other than 0. Exit 77 (the bench could not run here,
its reason on stderr) passes through: ctest reports it skipped (SKIP_RETURN_CODE 77), and
deploy/test.sh's skip report lists it with that reason. The bench's stderr passes through
as it comes. Standard library only (Debian's /usr/bin/python3).
"""
import json
import math
import os
import subprocess
import sys

SKIP = 77
LINE_MAX = 1 << 20          # a metric line longer than this is not one


def s_reject_constant(name):
    raise ValueError("non-finite value %s" % name)


def check_line(line, bench):
    """None when `line` is a metric line of `bench` with a finite value; else why not."""
    if len(line) > LINE_MAX:
        return "a line of %d bytes" % len(line)
    try:
        obj = json.loads(line, parse_constant=s_reject_constant)
    except ValueError as e:
        return "not a JSON metric line (%s)" % e
    if not isinstance(obj, dict):
        return "not a JSON object"
    if obj.get("bench") != bench:
        return "bench is %r, not %r" % (obj.get("bench"), bench)
    metric, value, unit = obj.get("metric"), obj.get("value"), obj.get("unit")
    if not isinstance(metric, str) or not metric:
        return "no metric name"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "metric %s: value %r is not a number" % (metric, value)
    if not math.isfinite(float(value)):
        return "metric %s: value %r is not finite" % (metric, value)
    if not isinstance(unit, str) or not unit:
        return "metric %s: no unit" % metric
    return None


def run(name, exe, args):
    if not os.access(exe, os.X_OK):
        print("bench_check: %s is not built" % exe, file=sys.stderr)
        return 1
    print("bench_check: %s %s" % (exe, " ".join(args)), file=sys.stderr, flush=True)
    proc = subprocess.run([exe] + args, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    out = proc.stdout.decode("utf-8", "replace")
    if proc.returncode == SKIP:
        print("bench %s: skipped (exit 77): its reason is above" % name, file=sys.stderr)
        return SKIP
    metrics, bad = [], []
    for line in out.splitlines():
        if not line.strip():
            continue
        why = check_line(line, name)
        if why:
            bad.append("%s: %s" % (why, line[:200]))
        else:
            metrics.append(json.loads(line))
    for m in metrics:
        print("  %s.%s = %s %s" % (name, m["metric"], m["value"], m["unit"]))
    for b in bad:
        print("bench_check: %s: bad output: %s" % (name, b), file=sys.stderr)
    if proc.returncode != 0:
        print("bench_check: %s exited %d" % (name, proc.returncode), file=sys.stderr)
        return 1
    if bad:
        return 1
    if not metrics:
        print("bench_check: %s printed no metric" % name, file=sys.stderr)
        return 1
    print("bench_check: %s: %d metric(s), every value finite" % (name, len(metrics)))
    return 0


def registered(bin_dir, names):
    built = sorted(f[len("bench_"):] for f in os.listdir(bin_dir)
                   if f.startswith("bench_") and os.access(os.path.join(bin_dir, f), os.X_OK))
    missing = [b for b in built if b not in names]
    if missing:
        print("bench_check: built but not registered as a bench.* ctest test: %s (tests/bench/CMakeLists.txt)"
              % ", ".join(missing), file=sys.stderr)
        return 1
    print("bench_check: every bench_* in %s is registered (%d)" % (bin_dir, len(built)))
    return 0


def main(argv):
    if len(argv) >= 3 and argv[0] == "run":
        return run(argv[1], argv[2], argv[3:])
    if len(argv) >= 2 and argv[0] == "registered":
        return registered(argv[1], set(argv[2:]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
