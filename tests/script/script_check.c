/* script_check — the static verdict on script files, without a stack (for
 * people writing corpus scripts and rules): script_check FILE... prints one
 * JSON verdict per file; exit 0 when all are valid, 1 otherwise. */
#include "script_validator.h"

#include <stdio.h>
#include <stdlib.h>

#include "script_testutil.h"

int main (int argc, char **argv)
{
    char err[512];
    json_t *rna = bmq_script_rna_load (BMQ_SOURCE_DIR "/" BMQ_SCRIPT_RNA_FIXTURE, err, sizeof err);
    bmq_script_validator_t *v = rna ? bmq_script_validator_new (NULL, rna, err, sizeof err) : NULL;
    if (!v) {
        fprintf (stderr, "script_check: %s\n", err);
        return 2;
    }
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        size_t len;
        char *src = stu_read (argv[i], &len);
        if (!src) {
            fprintf (stderr, "script_check: cannot read %s\n", argv[i]);
            rc = 2;
            continue;
        }
        json_t *verdict = bmq_script_validate (v, src, len);
        json_object_del (verdict, "stats");
        char *text = json_dumps (verdict, JSON_COMPACT);
        printf ("%s %s\n", argv[i], text ? text : "null");
        if (!json_is_true (json_object_get (verdict, "is_valid")) && rc == 0)
            rc = 1;
        free (text);
        json_decref (verdict);
        free (src);
    }
    bmq_script_validator_destroy (&v);
    json_decref (rna);
    return rc;
}
