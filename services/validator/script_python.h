/* script_python — the embedded CPython 3.11 that parses BPY scripts.
 *
 * Blender 3.4.1 on Debian 12 links the system libpython3.11, the same library
 * this links: the tree the validator checks is the tree Blender would run, so
 * there is no parser differential (an NFKC-normalised identifier such as
 * "ｅｖａｌ" arrives here as "eval", exactly as Blender sees it).
 *
 * The interpreter is only a parser. It is initialised once per process with
 * an isolated configuration (PyConfig_InitIsolatedConfig: no environment
 * variables, no user site, no site import, safe_path, no signal handlers, no
 * bytecode writes) and never runs Python code: the tree is walked from C
 * (script_walk). After initialisation the GIL is released; every entry point
 * below must be called with the GIL held (bmq_script_python_lock/unlock), so
 * callers on any thread are safe.
 *
 * This header exposes Python.h; only the script_* sources include it. */
#ifndef BMQ_SCRIPT_PYTHON_H
#define BMQ_SCRIPT_PYTHON_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdbool.h>
#include <stddef.h>

/* Initialise the interpreter (first call only; later calls return at once).
 * 0, or -1 with a reason in err when libpython cannot start. Thread-safe. */
int bmq_script_python_init (char *err, size_t errlen);

/* Take / give back the GIL (PyGILState_Ensure / Release). */
typedef int bmq_script_gil_t;
bmq_script_gil_t bmq_script_python_lock (void);
void bmq_script_python_unlock (bmq_script_gil_t state);

/* Parse `src` (NUL-terminated UTF-8) to an ast.Module with Blender's grammar
 * (Py_CompileStringExFlags, PyCF_ONLY_AST). Returns a new reference, or NULL
 * with the failure in *line, *col (1-based, 0 when unknown) and msg: a
 * SyntaxError's message, or "nesting too deep" when the parser's own
 * recursion guard fires. No Python exception is left set. GIL held. */
PyObject *bmq_script_python_parse (const char *src, int *line, int *col, char *msg, size_t msglen);

/* Objects the cyclic GC tracks, after a full collection (tests: a refcount
 * leak of a node, a list or a dict shows as growth between two calls; LSan
 * cannot see those, since the GC's lists keep them reachable). Takes the GIL. */
size_t bmq_script_python_tracked_objects (void);

/* The AST node classes, as the walker tells them apart. */
typedef enum {
    BMQ_AST_OTHER = 0,
    BMQ_AST_Module, BMQ_AST_FunctionDef, BMQ_AST_AsyncFunctionDef, BMQ_AST_ClassDef,
    BMQ_AST_Return, BMQ_AST_Delete, BMQ_AST_Assign, BMQ_AST_AugAssign, BMQ_AST_AnnAssign,
    BMQ_AST_For, BMQ_AST_AsyncFor, BMQ_AST_While, BMQ_AST_If, BMQ_AST_With, BMQ_AST_AsyncWith,
    BMQ_AST_Match, BMQ_AST_Raise, BMQ_AST_Try, BMQ_AST_TryStar, BMQ_AST_Assert,
    BMQ_AST_Import, BMQ_AST_ImportFrom, BMQ_AST_Global, BMQ_AST_Nonlocal, BMQ_AST_Expr,
    BMQ_AST_BoolOp, BMQ_AST_NamedExpr, BMQ_AST_BinOp, BMQ_AST_UnaryOp, BMQ_AST_Lambda,
    BMQ_AST_IfExp, BMQ_AST_ListComp, BMQ_AST_SetComp, BMQ_AST_DictComp, BMQ_AST_GeneratorExp,
    BMQ_AST_Await, BMQ_AST_Yield, BMQ_AST_YieldFrom, BMQ_AST_Call, BMQ_AST_FormattedValue,
    BMQ_AST_JoinedStr, BMQ_AST_Constant, BMQ_AST_Attribute, BMQ_AST_Subscript,
    BMQ_AST_Starred, BMQ_AST_Name, BMQ_AST_List, BMQ_AST_Tuple, BMQ_AST_Set, BMQ_AST_Dict,
    BMQ_AST_Store, BMQ_AST_Del, BMQ_AST_Load,
    BMQ_AST_Mult, BMQ_AST_Pow, BMQ_AST_LShift, BMQ_AST_USub, BMQ_AST_UAdd,
    BMQ_AST_ExceptHandler, BMQ_AST_arguments, BMQ_AST_arg, BMQ_AST_keyword, BMQ_AST_alias,
    BMQ_AST_comprehension,
    BMQ_AST_KIND_COUNT
} bmq_ast_kind_t;

/* The kind of an AST object (BMQ_AST_OTHER for other node classes and for
 * anything that is not a node). GIL held. */
bmq_ast_kind_t bmq_script_ast_kind (PyObject *node);
/* The node class's _fields (borrowed tuple), NULL for a non-node. */
PyObject *bmq_script_ast_fields (PyObject *node);
/* True when obj is an ast.AST instance. */
bool bmq_script_ast_is_node (PyObject *obj);

/* Interned attribute names the walker reads (borrowed; valid for the process). */
typedef struct {
    PyObject *id, *attr, *value, *func, *args, *keywords, *arg, *name, *names, *asname,
             *module, *level, *lineno, *col_offset, *targets, *target, *iter, *body,
             *orelse, *test, *decorator_list, *op, *left, *right, *operand, *elts,
             *slice, *handlers, *ctx, *generators, *vararg, *kwarg, *kwonlyargs,
             *posonlyargs, *defaults, *kw_defaults, *returns, *annotation, *keys,
             *values, *type_comment, *type;
} bmq_script_names_t;
const bmq_script_names_t *bmq_script_names (void);

#endif
