/* mcp_mrtr — input-required results (2026-07-28, SEP-2322): a request that
 * needs the client's input answers with what to ask (inputRequests) and an
 * opaque requestState; the client asks, then sends the request again with
 * inputResponses and the state. The state is signed (HMAC-SHA256 with a key
 * made at start): a client cannot skip a round or change earlier answers. */
#include "mcp_surface.h"

#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STATE (64 * 1024)

static unsigned char s_key[crypto_auth_hmacsha256_KEYBYTES];
static pthread_once_t s_key_once = PTHREAD_ONCE_INIT;
static void s_key_make (void) { randombytes_buf (s_key, sizeof s_key); }

static char *s_sign (const json_t *payload)
{
    pthread_once (&s_key_once, s_key_make);
    char *text = json_dumps (payload, JSON_COMPACT | JSON_SORT_KEYS);
    size_t len = strlen (text);
    size_t b64len = sodium_base64_ENCODED_LEN (len, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    unsigned char mac[crypto_auth_hmacsha256_BYTES];
    crypto_auth_hmacsha256 (mac, (const unsigned char *) text, len, s_key);
    char *state = malloc (b64len + 1 + sizeof mac * 2 + 1);
    sodium_bin2base64 (state, b64len, (const unsigned char *) text, len, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    size_t used = strlen (state);
    state[used++] = '.';
    sodium_bin2hex (state + used, sizeof mac * 2 + 1, mac, sizeof mac);
    free (text);
    return state;
}

/* The payload of a state we signed, or NULL. */
static json_t *s_verify (const char *state)
{
    pthread_once (&s_key_once, s_key_make);
    const char *dot = state ? strrchr (state, '.') : NULL;
    if (!dot || strlen (state) > MAX_STATE || strlen (dot + 1) != crypto_auth_hmacsha256_BYTES * 2) return NULL;
    unsigned char mac[crypto_auth_hmacsha256_BYTES];
    size_t maclen = 0;
    if (sodium_hex2bin (mac, sizeof mac, dot + 1, strlen (dot + 1), NULL, &maclen, NULL) || maclen != sizeof mac) return NULL;
    size_t cap = (size_t) (dot - state);
    unsigned char *text = malloc (cap + 1);
    size_t len = 0;
    json_t *payload = NULL;
    if (!sodium_base642bin (text, cap, state, cap, NULL, &len, NULL, sodium_base64_VARIANT_URLSAFE_NO_PADDING)
        && !crypto_auth_hmacsha256_verify (mac, text, len, s_key))
        payload = json_loadb ((const char *) text, len, JSON_REJECT_DUPLICATES, NULL);
    free (text);
    return json_is_object (payload) ? payload : (json_decref (payload), NULL);
}

/* A round's requests, without those the client cannot answer. */
static json_t *s_requests (const json_t *round, bmq_mcp_client_caps_t caps)
{
    json_t *requests = json_object ();
    const char *key;
    json_t *r;
    json_object_foreach (json_object_get ((json_t *) round, "inputRequests"), key, r) {
        const char *method = json_string_value (json_object_get (r, "method"));
        bool can = method && ((!strcmp (method, "elicitation/create") && caps.elicitation)
                              || (!strcmp (method, "sampling/createMessage") && caps.sampling)
                              || (!strcmp (method, "roots/list") && caps.roots));
        if (can) json_object_set (requests, key, r);
    }
    return requests;
}

static json_t *s_input_required (const char *subject, int round, const json_t *answers, json_t *requests, const json_t *extra)
{
    json_t *payload = json_pack ("{s:s, s:i, s:O}", "s", subject, "r", round, "a", answers);
    if (extra) json_object_set (payload, "x", (json_t *) extra);
    char *state = s_sign (payload);
    json_decref (payload);
    json_t *result = json_pack ("{s:s, s:o, s:s}", "resultType", "input_required", "inputRequests", requests, "requestState", state);
    free (state);
    return result;
}

int bmq_mcp_mrtr (const char *subject, const json_t *rounds, const json_t *extra, const json_t *params, bmq_mcp_client_caps_t caps,
                  json_t **out, char *err, size_t errlen)
{
    *out = NULL;
    json_t *responses = json_object_get (params, "inputResponses");
    json_t *state = json_object_get (params, "requestState");
    if ((responses && !json_is_object (responses)) || (state && !json_is_string (state))) {
        snprintf (err, errlen, "inputResponses must be an object (and requestState a string)");
        return -1;
    }
    int round = 0;
    json_t *answers = json_object (), *kept = extra ? json_incref ((json_t *) extra) : NULL;
    if (state) {
        json_t *payload = s_verify (json_string_value (state));
        const char *was = json_string_value (json_object_get (payload, "s"));
        if (!payload || !was || strcmp (was, subject) || !json_is_object (json_object_get (payload, "a"))) {
            json_decref (payload);
            json_decref (answers);
            json_decref (kept);
            snprintf (err, errlen, "requestState failed its integrity check (tampered, or from another request or server start)");
            return -1;
        }
        round = (int) json_integer_value (json_object_get (payload, "r"));
        json_object_update (answers, json_object_get (payload, "a"));
        if (json_object_get (payload, "x")) { json_decref (kept); kept = json_incref (json_object_get (payload, "x")); }
        json_decref (payload);
    }
    for (; round < (int) json_array_size (rounds); round++) {
        json_t *requests = s_requests (json_array_get (rounds, (size_t) round), caps);
        const char *key;
        json_t *r;
        bool all = true;
        json_object_foreach (requests, key, r) {
            json_t *answer = json_object_get (responses, key);
            if (!json_is_object (answer)) { all = false; break; }
        }
        if (!all) {                             /* ask (again) for this round; extra keys are ignored */
            *out = s_input_required (subject, round, answers, requests, kept);
            json_decref (answers);
            json_decref (kept);
            return 1;
        }
        json_object_foreach (requests, key, r) json_object_set (answers, key, json_object_get (responses, key));
        json_decref (requests);
        responses = NULL;                       /* the next round's answers come with the next request */
    }
    *out = json_pack ("{s:o, s:o}", "answers", answers, "extra", kept ? kept : json_null ());
    return 0;
}

json_t *bmq_mcp_mrtr_vars (const json_t *answers)
{
    json_t *vars = json_object ();
    const char *key;
    json_t *v;
    json_object_foreach ((json_t *) answers, key, v) {
        /* what a person or model said, as text: an elicitation's content, a sampling's text, else the JSON */
        json_t *said = json_object_get (json_object_get (v, "content"), "text");
        if (!json_is_string (said) && json_object_size (json_object_get (v, "content")) == 1) {
            const char *k;
            json_t *only;
            json_object_foreach (json_object_get (v, "content"), k, only) said = only;
        }
        if (json_is_string (said)) json_object_set (vars, key, said);
        else {
            char *text = json_dumps (said ? said : v, JSON_COMPACT | JSON_ENCODE_ANY);
            json_object_set_new (vars, key, json_string (text ? text : "?"));
            free (text);
        }
    }
    return vars;
}
