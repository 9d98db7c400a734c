/* cli_keys — `blendmq keys init | add-client NAME --role ROLE | revoke NAME | list`:
 * a deployment's CURVE keys and HTTP tokens (common/keys.h). */
#include "cli.h"
#include "keys.h"

#include <stdio.h>
#include <string.h>

const char *bmq_cli_keys_dir (const bmq_cli_opts_t *opts, const bmq_config_t *cfg, char *buf, size_t len)
{
    const char *configured = cfg ? bmq_config_str (cfg, "security.keys_dir") : "";
    if (opts->keys_dir && *opts->keys_dir) snprintf (buf, len, "%s", opts->keys_dir);
    else if (configured && *configured) snprintf (buf, len, "%s", configured);
    else snprintf (buf, len, "%s/keys", opts->run_dir);
    return buf;
}

int bmq_cli_keys (const bmq_cli_opts_t *opts, int nwords, const char **words)
{
    char dir[1100], err[512];
    const char *use = opts->config_path;
    char path[1200];
    if (!use) {
        snprintf (path, sizeof path, "%s/blendmq.yaml", opts->run_dir);
        if (zsys_file_exists (path)) use = path;
    }
    bmq_config_t *cfg = bmq_config_load (use, err, sizeof err);
    bmq_cli_keys_dir (opts, cfg, dir, sizeof dir);
    bmq_config_destroy (&cfg);
    const char *action = nwords ? words[0] : "";
    int rc = 2;
    if (!strcmp (action, "init") && nwords == 1) {
        int created = 0;
        if (bmq_keys_init (dir, &created, err, sizeof err)) fprintf (stderr, "blendmq: %s\n", err);
        else {
            if (opts->json) printf ("{\"keys_dir\": \"%s\", \"created\": %d}\n", dir, created);
            else printf ("%d new key(s) in %s\n", created, dir);
            rc = 0;
        }
    }
    else if (!strcmp (action, "add-client") && nwords == 2) {
        if (!opts->role) fprintf (stderr, "blendmq: keys add-client NAME --role viewer|operator|reviewer|admin\n");
        else if (bmq_keys_add_client (dir, words[1], opts->role, err, sizeof err)) { fprintf (stderr, "blendmq: %s\n", err); rc = 1; }
        else {
            if (opts->json) printf ("{\"name\": \"%s\", \"role\": \"%s\", \"cert\": \"%s/%s.cert\", \"token\": \"%s/%s.token\"}\n",
                                    words[1], opts->role, dir, words[1], dir, words[1]);
            else printf ("client %s (%s): %s/%s.cert, secret %s/%s.cert_secret, HTTP token %s/%s.token\n",
                         words[1], opts->role, dir, words[1], dir, words[1], dir, words[1]);
            rc = 0;
        }
    }
    else if (!strcmp (action, "revoke") && nwords == 2) {
        if (bmq_keys_revoke (dir, words[1], err, sizeof err)) { fprintf (stderr, "blendmq: %s\n", err); rc = 1; }
        else {
            if (opts->json) printf ("{\"revoked\": \"%s\"}\n", words[1]);
            else printf ("revoked %s: servers refuse its next connection; its HTTP token is gone\n", words[1]);
            rc = 0;
        }
    }
    else if (!strcmp (action, "list") && nwords == 1) {
        json_t *list = bmq_keys_list (dir, err, sizeof err);
        if (!list) fprintf (stderr, "blendmq: %s\n", err);
        else {
            size_t i;
            json_t *k;
            if (opts->json) {
                json_array_foreach (list, i, k) {
                    char *line = json_dumps (k, JSON_COMPACT);
                    printf ("%s\n", line);
                    free (line);
                }
            }
            else {
                printf ("%-16s %-9s %-7s %-5s %s\n", "NAME", "ROLE", "TRUSTED", "TOKEN", "PUBLIC KEY");
                json_array_foreach (list, i, k)
                    printf ("%-16s %-9s %-7s %-5s %s\n", json_string_value (json_object_get (k, "name")),
                            json_string_value (json_object_get (k, "role")),
                            json_is_true (json_object_get (k, "trusted")) ? "yes" : "no",
                            json_is_true (json_object_get (k, "token")) ? "yes" : "no",
                            json_string_value (json_object_get (k, "public_key")));
            }
            json_decref (list);
            rc = 0;
        }
    }
    else fprintf (stderr, "usage: blendmq [--keys-dir DIR] keys init | add-client NAME --role ROLE | revoke NAME | list\n");
    return rc;
}
