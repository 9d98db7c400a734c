"""log — one line per event on stderr (Blender's stdout carries operator reports)."""
import sys


def log(msg):
    print("blendmq-addon: " + msg, file=sys.stderr, flush=True)
