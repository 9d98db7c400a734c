"""The sandbox's and the live add-on's view of each script, for test_script_differential.

Run inside Blender (its own libpython3.11):
  blender -b --factory-startup --python dump_python.py -- ADDON_DIR OUT.jsonl FILE...
For every FILE it writes one JSON line {"file", "sandbox", "live", "str"}: the ast.dump of the
program script_exec compiles, as the sandbox runner gets it (the bytes of a file, decoded
strictly as UTF-8) and as the add-on gets it (a str that crossed the link as JSON), or
{"error": ...} when script_exec refuses it."""
import ast
import json
import sys

argv = sys.argv[sys.argv.index("--") + 1:]
sys.path.insert(0, argv[0])
import script_exec  # noqa: E402  (the one runtime guard, services/executor/addon/blendmq)


def bare_compile(source):
    """What any consumer compiling this str runs, with no refusal first (compile() of a str
    ignores coding declarations): the validator's parse must always equal this."""
    try:
        return {"dump": script_exec.canonical_dump(compile(source, "<script>", "exec", ast.PyCF_ONLY_AST,
                                                           dont_inherit=True))}
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        return {"error": str(e)[:200]}


def view(source):
    try:
        return {"dump": script_exec.ast_dump(source)}
    except (script_exec.ScriptRefused, RecursionError, MemoryError) as e:
        return {"error": str(e)[:200]}


with open(argv[1], "w") as out:
    for path in argv[2:]:
        with open(path, "rb") as f:
            raw = f.read()
        try:
            as_file = raw.decode("utf-8")          # the sandbox runner's decoding
        except UnicodeDecodeError as e:
            row = {"file": path, "sandbox": {"error": "not UTF-8: %s" % e}, "live": {"error": "not UTF-8"}}
        else:
            as_link = json.loads(json.dumps(as_file))   # the add-on's run_script argument
            row = {"file": path, "sandbox": view(as_file), "live": view(as_link), "str": bare_compile(as_file)}
        out.write(json.dumps(row) + "\n")
sys.exit(0)
