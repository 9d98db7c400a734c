/* recipe_save — save_recipe (seed 002): keep a validated plan as a recipe of
 * the knowledge base, usable at once, without a restart.
 *
 * The name is the only part of a path that comes from outside, so it is
 * checked before it goes anywhere near one: 1 to 64 bytes of a-z, 0-9 and
 * '_', starting with a letter. That alone refuses "../x", "/etc/x", "a/b",
 * "a\\b", "C:x", ".", "..", names with a NUL inside, spaces, upper case and
 * every non-ASCII byte (so no Unicode look-alikes of '/', '.' or letters).
 * Windows device names (con, nul, aux, prn, com1-9, lpt1-9) are refused too,
 * as are names a built-in or saved recipe already has.
 *
 * The file is written inside the folder through a directory descriptor
 * (openat with O_EXCL|O_NOFOLLOW to a temporary name, fsync, then renameat2
 * with RENAME_NOREPLACE to NAME.yaml), so a symbolic link planted in the
 * folder cannot redirect the write and an existing file is never replaced. */
#ifndef BMQ_RECIPE_SAVE_H
#define BMQ_RECIPE_SAVE_H

#include "recipe_book.h"

#include <jansson.h>
#include <stddef.h>

#define BMQ_RECIPE_NAME_MAX  64
#define BMQ_RECIPE_DESC_MAX  500

/* 0 when name (len bytes, which may hold NULs) is acceptable; -1 with why. */
int bmq_recipe_name_check (const char *name, size_t len, char *err, size_t errlen);

/* Save plan (a JSON array of steps the caller has validated) as recipe `name`
 * in folder `dir` (created if missing, not its parents), and add it to book.
 * description may be NULL; keywords may be NULL (the name is a keyword
 * anyway). path_out (may be NULL) gets the file written. 0 / -1 with err. */
int bmq_recipe_save (bmq_recipe_book_t *book, const char *dir, const char *name, size_t name_len,
                     const char *description, const json_t *keywords, const json_t *plan,
                     char *path_out, size_t path_len, char *err, size_t errlen);

#endif
