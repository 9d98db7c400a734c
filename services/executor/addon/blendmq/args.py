"""args — checking what a client sent: every command's arguments come from the network."""
import math

from mathutils import Vector


class CommandError(Exception):
    """An expected failure: its text is the reply's error message as is."""


def s_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def s_vec3(params, key, where):
    v = params.get(key)
    if not (isinstance(v, list) and len(v) == 3 and all(s_num(x) for x in v)):
        raise CommandError("%s: %s must be [x, y, z] numbers" % (where, key))
    return Vector(v)


def s_int_arg(args, key, default, lo, hi):
    v = args.get(key, default)
    if not isinstance(v, int) or isinstance(v, bool):
        raise CommandError("%s must be an integer" % key)
    return min(max(v, lo), hi)


def s_only(params, allowed, where):
    extra = sorted(set(params) - set(allowed))
    if extra:
        raise CommandError("%s: unknown parameter %s" % (where, extra[0]))


def s_tuples(v):
    """bpy wants sequences for vector properties; JSON gives lists."""
    if isinstance(v, list):
        return tuple(s_tuples(x) for x in v)
    if isinstance(v, dict):
        return {k: s_tuples(x) for k, x in v.items()}
    return v
