"""bench — the baseline of the pipeline benchmark (bench_direct)."""
import time

import bpy

from .args import CommandError, s_int_arg

BENCH_OPS = ("primitive_cube_add", "primitive_uv_sphere_add", "primitive_cone_add", "primitive_cylinder_add")


def cmd_bench_direct(args):
    """The baseline of the pipeline benchmark: the same bpy calls a plan makes, run directly
    in a loop here, timed inside Blender. Only a fixed set of cheap primitives and a bounded
    count: nothing a client sends reaches bpy unchecked."""
    count = s_int_arg(args, "count", 50, 1, 500)
    op = args.get("operation", "primitive_cube_add")
    if op not in BENCH_OPS:
        raise CommandError("bench_direct: operation must be one of %s" % ", ".join(BENCH_OPS))
    fn = getattr(bpy.ops.mesh, op)
    t0 = time.perf_counter()
    for i in range(count):
        fn(location=(float(i), 0.0, 0.0))
    return {"count": count, "operation": "bpy.ops.mesh." + op,
            "direct_ms": (time.perf_counter() - t0) * 1000.0}, None
