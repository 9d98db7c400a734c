/* script_literal — literal values read from the tree: a number (with a unary
 * sign), a string, a bool, a literal sequence. What is not a literal is
 * "unknown" here: the caps and RNA checks only judge what the text fixes, and
 * the sandbox run judges the rest. GIL held. */
#ifndef BMQ_SCRIPT_LITERAL_H
#define BMQ_SCRIPT_LITERAL_H

#include "script_python.h"

/* A literal number: Constant int/float/bool, or +/- of one. *is_int tells an
 * int (or bool) from a float; a huge int reads as ±inf. */
bool bmq_script_literal_number (PyObject *node, double *value, bool *is_int);
/* A literal bool (True / False). */
bool bmq_script_literal_bool (PyObject *node, bool *value);
/* A literal str: the UTF-8 (borrowed from the tree) and its byte length. */
bool bmq_script_literal_str (PyObject *node, const char **text, Py_ssize_t *len);
/* A literal List, Tuple or Set: its elts (new reference to the list). */
PyObject *bmq_script_literal_elts (PyObject *node, bmq_ast_kind_t *kind);
/* A node's position (1-based line and column), or the fallback. */
void bmq_script_position (PyObject *node, int *line, int *col);
/* The instance dict of a node of a class the walker names (borrowed), or
 * NULL (another object, or no dict). */
PyObject *bmq_script_node_dict (PyObject *node);
/* getattr that never leaves an exception set: new reference or NULL. */
PyObject *bmq_script_get (PyObject *node, PyObject *name);
/* The UTF-8 of a str attribute (borrowed from the node; "" when absent). The
 * node must outlive the pointer. */
const char *bmq_script_get_str (PyObject *node, PyObject *name);

#endif
