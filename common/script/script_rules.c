/* script_rules — the default allowlists and caps for BPY scripts: declared in
 * proto/script_rules.json, made into bmq_script_rules_table.c by proto/gen_protocols.py
 * (the add-on's blendmq/script_rules.py is made from the same declaration). */
#include "script_rules.h"
#include "bmq_script_rules_table.h"

#include <stdio.h>
#include <string.h>

json_t *bmq_script_rules_default (void)
{
    json_t *rules = json_object ();
    for (const bmq_script_rule_list_t *l = bmq_script_rule_lists; l->key; l++) {
        json_t *list = json_array ();
        for (const char *const *s = l->items; *s; s++)
            json_array_append_new (list, json_string (*s));
        json_object_set_new (rules, l->key, list);
    }
    json_t *limits = json_object ();
    for (const bmq_script_rule_limit_t *l = bmq_script_rule_limits; l->key; l++)
        json_object_set_new (limits, l->key, json_real (l->value));
    json_object_set_new (rules, "limits", limits);
    return rules;
}

static int s_string_list (const json_t *v)
{
    size_t i;
    json_t *s;
    if (!json_is_array (v))
        return -1;
    json_array_foreach (v, i, s)
        if (!json_is_string (s))
            return -1;
    return 0;
}

json_t *bmq_script_rules_effective (const json_t *config, char *err, size_t errlen)
{
    json_t *rules = bmq_script_rules_default ();
    if (!config)
        return rules;
    if (!json_is_object (config)) {
        snprintf (err, errlen, "script rules: expected an object");
        goto fail;
    }
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *) config, key, v) {
        if (strcmp (key, "limits") == 0) {
            if (!json_is_object (v)) {
                snprintf (err, errlen, "script rules: limits must be an object");
                goto fail;
            }
            json_t *limits = json_object_get (rules, "limits");
            const char *lk;
            json_t *lv;
            json_object_foreach (v, lk, lv) {
                if (!json_object_get (limits, lk) || !json_is_number (lv) || json_number_value (lv) <= 0) {
                    snprintf (err, errlen, "script rules: limits.%s must be a known positive number", lk);
                    goto fail;
                }
                json_object_set_new (limits, lk, json_real (json_number_value (lv)));
            }
            continue;
        }
        if (!json_object_get (rules, key) || s_string_list (v) < 0) {
            snprintf (err, errlen, "script rules: %s is not a known list of strings", key);
            goto fail;
        }
        json_object_set (rules, key, v);
    }
    return rules;
fail:
    json_decref (rules);
    return NULL;
}

static double s_limit (const json_t *rules, const char *key)
{
    return json_number_value (json_object_get (json_object_get (rules, "limits"), key));
}

void bmq_script_rules_limits (const json_t *rules, bmq_script_limits_t *l)
{
    l->max_bytes = (size_t) s_limit (rules, "max_bytes");
    l->max_nodes = (size_t) s_limit (rules, "max_nodes");
    l->max_loop_depth = (int) s_limit (rules, "max_loop_depth");
    l->max_range = s_limit (rules, "max_range");
    l->max_loop_iterations = s_limit (rules, "max_loop_iterations");
    l->max_subdivision = s_limit (rules, "max_subdivision");
    l->max_array_count = s_limit (rules, "max_array_count");
    l->max_resolution = s_limit (rules, "max_resolution");
    l->max_repeat = s_limit (rules, "max_repeat");
    l->max_pow_bits = s_limit (rules, "max_pow_bits");
    l->max_errors = (size_t) s_limit (rules, "max_errors");
}
