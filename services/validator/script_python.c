/* script_python — one isolated, embedded CPython per process, used to parse. */
#include "script_python.h"

#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <stdio.h>
#include <string.h>

static const char *s_kind_names[BMQ_AST_KIND_COUNT] = {
    [BMQ_AST_Module] = "Module", [BMQ_AST_FunctionDef] = "FunctionDef",
    [BMQ_AST_AsyncFunctionDef] = "AsyncFunctionDef", [BMQ_AST_ClassDef] = "ClassDef",
    [BMQ_AST_Return] = "Return", [BMQ_AST_Delete] = "Delete", [BMQ_AST_Assign] = "Assign",
    [BMQ_AST_AugAssign] = "AugAssign", [BMQ_AST_AnnAssign] = "AnnAssign", [BMQ_AST_For] = "For",
    [BMQ_AST_AsyncFor] = "AsyncFor", [BMQ_AST_While] = "While", [BMQ_AST_If] = "If",
    [BMQ_AST_With] = "With", [BMQ_AST_AsyncWith] = "AsyncWith", [BMQ_AST_Match] = "Match",
    [BMQ_AST_Raise] = "Raise", [BMQ_AST_Try] = "Try", [BMQ_AST_TryStar] = "TryStar",
    [BMQ_AST_Assert] = "Assert", [BMQ_AST_Import] = "Import", [BMQ_AST_ImportFrom] = "ImportFrom",
    [BMQ_AST_Global] = "Global", [BMQ_AST_Nonlocal] = "Nonlocal", [BMQ_AST_Expr] = "Expr",
    [BMQ_AST_BoolOp] = "BoolOp", [BMQ_AST_NamedExpr] = "NamedExpr", [BMQ_AST_BinOp] = "BinOp",
    [BMQ_AST_UnaryOp] = "UnaryOp", [BMQ_AST_Lambda] = "Lambda", [BMQ_AST_IfExp] = "IfExp",
    [BMQ_AST_ListComp] = "ListComp", [BMQ_AST_SetComp] = "SetComp", [BMQ_AST_DictComp] = "DictComp",
    [BMQ_AST_GeneratorExp] = "GeneratorExp", [BMQ_AST_Await] = "Await", [BMQ_AST_Yield] = "Yield",
    [BMQ_AST_YieldFrom] = "YieldFrom", [BMQ_AST_Call] = "Call",
    [BMQ_AST_FormattedValue] = "FormattedValue", [BMQ_AST_JoinedStr] = "JoinedStr",
    [BMQ_AST_Constant] = "Constant", [BMQ_AST_Attribute] = "Attribute",
    [BMQ_AST_Subscript] = "Subscript", [BMQ_AST_Starred] = "Starred", [BMQ_AST_Name] = "Name",
    [BMQ_AST_List] = "List", [BMQ_AST_Tuple] = "Tuple", [BMQ_AST_Set] = "Set", [BMQ_AST_Dict] = "Dict",
    [BMQ_AST_Store] = "Store", [BMQ_AST_Del] = "Del", [BMQ_AST_Load] = "Load",
    [BMQ_AST_Mult] = "Mult", [BMQ_AST_Pow] = "Pow", [BMQ_AST_LShift] = "LShift",
    [BMQ_AST_USub] = "USub", [BMQ_AST_UAdd] = "UAdd", [BMQ_AST_ExceptHandler] = "ExceptHandler",
    [BMQ_AST_arguments] = "arguments", [BMQ_AST_arg] = "arg", [BMQ_AST_keyword] = "keyword",
    [BMQ_AST_alias] = "alias", [BMQ_AST_comprehension] = "comprehension",
};

/* Node class → kind, open addressing on the type pointer (filled once at init,
 * read-only afterwards, so lookups need no lock beyond the GIL). */
#define S_SLOTS 256
static struct { PyTypeObject *type; bmq_ast_kind_t kind; PyObject *fields; } s_slots[S_SLOTS];
static PyTypeObject *s_ast_base;
static bmq_script_names_t s_names;
static pthread_once_t s_once = PTHREAD_ONCE_INIT;
static int s_init_rc = -1;
static char s_init_err[256];

/* pymalloc's arenas, kept instead of unmapped: parsing a 500-line script
 * builds some 6,000 node objects (several MiB) and frees them all, and with
 * the default allocator every parse maps those arenas afresh and faults in
 * their pages again (about a fifth of the parse). Freed arenas go to a small
 * stack, at most S_ARENA_KEEP of them (S_ARENA_KEEP × 1 MiB stays mapped,
 * the size of the largest tree parsed so far, bounded); beyond it they are
 * unmapped as before. pymalloc calls these with the GIL held: no lock. */
#define S_ARENA_KEEP 48
static struct { void *p; size_t size; } s_arena_free[S_ARENA_KEEP];
static int s_arena_nfree;

static void *s_arena_alloc (void *ctx, size_t size)
{
    (void) ctx;
    for (int i = s_arena_nfree - 1; i >= 0; i--)
        if (s_arena_free[i].size == size) {
            void *p = s_arena_free[i].p;
            s_arena_free[i] = s_arena_free[--s_arena_nfree];
            return p;
        }
    void *p = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void s_arena_release (void *ctx, void *p, size_t size)
{
    (void) ctx;
    if (!p)
        return;
    if (s_arena_nfree < S_ARENA_KEEP) {
        s_arena_free[s_arena_nfree].p = p;
        s_arena_free[s_arena_nfree++].size = size;
        return;
    }
    munmap (p, size);
}

static size_t s_hash (const void *p)
{
    uintptr_t v = (uintptr_t) p;
    return (size_t) ((v >> 4) ^ (v >> 12)) & (S_SLOTS - 1);
}

static int s_intern_names (void)
{
#define S_NAME(f) if (!(s_names.f = PyUnicode_InternFromString (#f))) return -1;
    S_NAME (id) S_NAME (attr) S_NAME (value) S_NAME (func) S_NAME (args) S_NAME (keywords)
    S_NAME (arg) S_NAME (name) S_NAME (names) S_NAME (asname) S_NAME (module) S_NAME (level)
    S_NAME (lineno) S_NAME (col_offset) S_NAME (targets) S_NAME (target) S_NAME (iter)
    S_NAME (body) S_NAME (orelse) S_NAME (test) S_NAME (decorator_list) S_NAME (op)
    S_NAME (left) S_NAME (right) S_NAME (operand) S_NAME (elts) S_NAME (slice)
    S_NAME (handlers) S_NAME (ctx) S_NAME (generators) S_NAME (vararg) S_NAME (kwarg)
    S_NAME (kwonlyargs) S_NAME (posonlyargs) S_NAME (defaults) S_NAME (kw_defaults)
    S_NAME (returns) S_NAME (annotation) S_NAME (keys) S_NAME (values) S_NAME (type_comment) S_NAME (type)
#undef S_NAME
    return 0;
}

static int s_load_kinds (void)
{
    PyObject *mod = PyImport_ImportModule ("_ast");      /* built in: no file is read */
    if (!mod)
        return -1;
    s_ast_base = (PyTypeObject *) PyObject_GetAttrString (mod, "AST");
    int rc = s_ast_base && PyType_Check (s_ast_base) ? 0 : -1;
    for (int k = 1; rc == 0 && k < BMQ_AST_KIND_COUNT; k++) {
        PyObject *type = PyObject_GetAttrString (mod, s_kind_names[k]);
        if (!type || !PyType_Check (type)) { Py_XDECREF (type); rc = -1; break; }
        size_t i = s_hash (type);
        while (s_slots[i].type)
            i = (i + 1) & (S_SLOTS - 1);
        s_slots[i].type = (PyTypeObject *) type;      /* reference kept for the process */
        s_slots[i].kind = (bmq_ast_kind_t) k;
        s_slots[i].fields = PyObject_GetAttrString (type, "_fields");
        if (!s_slots[i].fields || !PyTuple_Check (s_slots[i].fields))
            rc = -1;
    }
    Py_DECREF (mod);
    return rc;
}

static void s_init (void)
{
    PyStatus st;
    if (Py_IsInitialized ()) {            /* a host that embeds Python already */
        snprintf (s_init_err, sizeof s_init_err, "Python is already initialised by the host process");
        return;
    }
    PyPreConfig pre;
    PyPreConfig_InitIsolatedConfig (&pre);
    pre.utf8_mode = 1;
#ifdef BMQ_SANITIZE
    /* Plain malloc under ASan: every Python object is then an ASan-tracked
     * block, so a wrong DECREF in our code shows as a use-after-free and a
     * forgotten one as a leak with our frame on its stack. */
    pre.allocator = PYMEM_ALLOCATOR_MALLOC;
#endif
    st = Py_PreInitialize (&pre);
    if (PyStatus_Exception (st)) {
        snprintf (s_init_err, sizeof s_init_err, "Python pre-initialisation failed: %s",
                  st.err_msg ? st.err_msg : "?");
        return;
    }
    /* The parser's buffers (tokens, the C-level AST arena, lists of nodes)
     * are freed at the end of each parse; with glibc's defaults the bigger
     * ones are mmapped and unmapped, and the heap's top trimmed, every time,
     * so the next parse faults all those pages in again (some 440 faults and
     * a millisecond per 500-line script). Fixed thresholds keep them: blocks
     * under 4 MiB come from the heap, and free memory at its top is given
     * back beyond 16 MiB. Process-wide: this library lives in the validator. */
    mallopt (M_MMAP_THRESHOLD, 4 << 20);
    mallopt (M_TRIM_THRESHOLD, 16 << 20);
    /* before any object exists, so every arena goes through the same pair */
    PyObjectArenaAllocator arenas = { NULL, s_arena_alloc, s_arena_release };
    PyObject_SetArenaAllocator (&arenas);
    PyConfig cfg;
    PyConfig_InitIsolatedConfig (&cfg);
    cfg.site_import = 0;
    cfg.user_site_directory = 0;
    cfg.install_signal_handlers = 0;      /* the service keeps its own SIGINT/SIGTERM */
    cfg.write_bytecode = 0;
    cfg.faulthandler = 0;
    cfg.tracemalloc = 0;
    cfg.pathconfig_warnings = 0;
    cfg.parse_argv = 0;
    cfg.safe_path = 1;
    cfg.buffered_stdio = 0;
    st = PyConfig_SetString (&cfg, &cfg.program_name, L"blendmq-script-validator");
    if (!PyStatus_Exception (st))
        st = Py_InitializeFromConfig (&cfg);
    PyConfig_Clear (&cfg);
    if (PyStatus_Exception (st)) {
        snprintf (s_init_err, sizeof s_init_err, "Python initialisation failed: %s",
                  st.err_msg ? st.err_msg : "?");
        return;
    }
    if (s_intern_names () < 0 || s_load_kinds () < 0) {
        PyErr_Clear ();
        snprintf (s_init_err, sizeof s_init_err, "Python's _ast module is not what Python 3.11 provides");
        PyEval_SaveThread ();
        return;
    }
    /* A parsed tree is acyclic (parents own children) and refcounting frees
     * it; the cyclic GC would only re-scan thousands of fresh nodes several
     * times per parse (about a third of the parse time at 500 lines). */
    PyGC_Disable ();
    PyEval_SaveThread ();                 /* callers take the GIL per call */
    s_init_rc = 0;
}

int bmq_script_python_init (char *err, size_t errlen)
{
    pthread_once (&s_once, s_init);
    if (s_init_rc < 0 && err && errlen)
        snprintf (err, errlen, "%s", s_init_err[0] ? s_init_err : "Python could not start");
    return s_init_rc;
}

bmq_script_gil_t bmq_script_python_lock (void)
{
    return (bmq_script_gil_t) PyGILState_Ensure ();
}

void bmq_script_python_unlock (bmq_script_gil_t state)
{
    PyGILState_Release ((PyGILState_STATE) state);
}

static long s_long_attr (PyObject *obj, const char *name)
{
    PyObject *v = PyObject_GetAttrString (obj, name);
    long out = v && PyLong_Check (v) ? PyLong_AsLong (v) : 0;
    Py_XDECREF (v);
    PyErr_Clear ();
    return out;
}

PyObject *bmq_script_python_parse (const char *src, int *line, int *col, char *msg, size_t msglen)
{
    PyCompilerFlags flags = _PyCompilerFlags_INIT;
    /* The text is decoded once, as UTF-8, and an encoding declaration never
     * changes that (PyCF_IGNORE_COOKIE, as compile() does for a str): the
     * sandbox and the live add-on compile the same str the same way. */
    flags.cf_flags = PyCF_ONLY_AST | PyCF_IGNORE_COOKIE;
    PyObject *tree = Py_CompileStringExFlags (src, "<script>", Py_file_input, &flags, -1);
    *line = *col = 0;
    if (tree)
        return tree;
    PyObject *type, *value, *tb;
    PyErr_Fetch (&type, &value, &tb);
    PyErr_NormalizeException (&type, &value, &tb);
    if (value && PyErr_GivenExceptionMatches (type, PyExc_SyntaxError)) {
        *line = (int) s_long_attr (value, "lineno");
        *col = (int) s_long_attr (value, "offset");
        PyObject *m = PyObject_GetAttrString (value, "msg");
        const char *text = m && PyUnicode_Check (m) ? PyUnicode_AsUTF8 (m) : NULL;
        snprintf (msg, msglen, "syntax error: %s", text ? text : "invalid syntax");
        Py_XDECREF (m);
    }
    else if (type && PyErr_GivenExceptionMatches (type, PyExc_RecursionError))
        snprintf (msg, msglen, "nesting too deep for the parser");
    else if (type && PyErr_GivenExceptionMatches (type, PyExc_MemoryError))
        snprintf (msg, msglen, "script too large for the parser");
    else
        snprintf (msg, msglen, "the parser failed");
    Py_XDECREF (type);
    Py_XDECREF (value);
    Py_XDECREF (tb);
    PyErr_Clear ();
    return NULL;
}

bmq_ast_kind_t bmq_script_ast_kind (PyObject *node)
{
    PyTypeObject *t = Py_TYPE (node);
    for (size_t i = s_hash (t); s_slots[i].type; i = (i + 1) & (S_SLOTS - 1))
        if (s_slots[i].type == t)
            return s_slots[i].kind;
    return BMQ_AST_OTHER;
}

PyObject *bmq_script_ast_fields (PyObject *node)
{
    PyTypeObject *t = Py_TYPE (node);
    for (size_t i = s_hash (t); s_slots[i].type; i = (i + 1) & (S_SLOTS - 1))
        if (s_slots[i].type == t)
            return s_slots[i].fields;
    if (!PyObject_TypeCheck (node, s_ast_base))
        return NULL;
    /* A node class the walker does not name: read its _fields (borrowed from
     * the class, which the tree keeps alive). */
    PyObject *fields = PyDict_GetItemString (t->tp_dict, "_fields");
    return fields && PyTuple_Check (fields) ? fields : NULL;
}

bool bmq_script_ast_is_node (PyObject *obj)
{
    return bmq_script_ast_kind (obj) != BMQ_AST_OTHER || PyObject_TypeCheck (obj, s_ast_base);
}

const bmq_script_names_t *bmq_script_names (void)
{
    return &s_names;
}

size_t bmq_script_python_tracked_objects (void)
{
    bmq_script_gil_t gil = bmq_script_python_lock ();
    size_t count = 0;
    PyObject *gc = PyImport_ImportModule ("gc");        /* built in */
    PyObject *r = gc ? PyObject_CallMethod (gc, "collect", NULL) : NULL;
    Py_XDECREF (r);
    PyObject *objs = gc ? PyObject_CallMethod (gc, "get_objects", NULL) : NULL;
    if (objs && PyList_Check (objs))
        count = (size_t) PyList_GET_SIZE (objs);
    Py_XDECREF (objs);
    Py_XDECREF (gc);
    PyErr_Clear ();
    bmq_script_python_unlock (gil);
    return count;
}
