/* worker_scripts — script.request in a validator worker (see worker_scripts.h). */
#include "worker_scripts.h"
#include "log.h"
#include "script_extract.h"
#include "script_validator.h"
#include "service.h"
#include "script_intake.h"

#include <stdlib.h>
#include <string.h>

struct bmq_worker_scripts_t {
    json_t                 *rna;
    bmq_script_validator_t *validator;
    char                    error[600];      /* why there is no validator */
    int64_t                 seal_ttl_ms;     /* security.seal_ttl_ms */
    char                    target[129];     /* executor.name: the seal's target when the request names none */
};

/* The string a script's seal signs: "script:" + sha256 hex. */
static void s_seal_subject (const char *sha256, char *out, size_t len)
{
    snprintf (out, len, "script:%s", sha256 ? sha256 : "");
}

bmq_worker_scripts_t *bmq_worker_scripts_new (bmq_config_t *cfg)
{
    bmq_worker_scripts_t *self = calloc (1, sizeof *self);
    if (!self) return NULL;
    char path[1024], err[512] = "";
    self->seal_ttl_ms = bmq_config_int (cfg, "security.seal_ttl_ms") > 0 ? bmq_config_int (cfg, "security.seal_ttl_ms")
                                                                          : BMQ_SEAL_TTL_DEFAULT_MS;
    snprintf (self->target, sizeof self->target, "%s",
              *bmq_config_str (cfg, "executor.name") ? bmq_config_str (cfg, "executor.name") : "local");
    bmq_service_path (bmq_config_str (cfg, "validator.script_rna"), BMQ_SCRIPT_RNA_FIXTURE, path, sizeof path);
    self->rna = bmq_script_rna_load (path, err, sizeof err);
    if (self->rna) self->validator = bmq_script_validator_new (NULL, self->rna, err, sizeof err);
    if (!self->validator) {
        snprintf (self->error, sizeof self->error, "the script checker cannot start: %s", err);
        bmq_warn ("%s (script requests will be refused)", self->error);
    }
    else bmq_info ("script checker ready (RNA table %s, %zu operators)", path, json_object_size (self->rna));
    return self;
}

void bmq_worker_scripts_destroy (bmq_worker_scripts_t **self_p)
{
    if (!self_p || !*self_p) return;
    bmq_worker_scripts_t *self = *self_p;
    bmq_script_validator_destroy (&self->validator);
    json_decref (self->rna);
    free (self);
    *self_p = NULL;
}


bmq_envelope_t *bmq_worker_scripts_handle (bmq_worker_scripts_t *self, const bmq_seal_key_t *key, bmq_audit_t *audit,
                                           const bmq_envelope_t *req)
{
    if (!self || !self->validator)
        return bmq_envelope_error (req, "unavailable", "%s", self ? self->error : "out of memory");
    const char *mode = bmq_body_str (req, "mode") ? bmq_body_str (req, "mode") : "format-to-bpy";
    if (strcmp (mode, "format-to-bpy") && strcmp (mode, "contextual"))
        return bmq_envelope_error (req, "bad_request", "mode must be \"format-to-bpy\" or \"contextual\"");
    json_t *text = json_object_get (req->body, "script");
    json_t *att = json_object_get (req->body, "attachment");
    const char *att_text = json_string_value (json_object_get (att, "content"));
    const char *att_name = json_string_value (json_object_get (att, "name"));
    const char *reply = json_string_value (text);
    size_t reply_len = json_string_length (text);
    bmq_script_extracted_t ex;
    json_t *verdict = bmq_script_intake (self->validator, mode, reply, reply_len, att_text,
                               att_text ? json_string_length (json_object_get (att, "content")) : 0,
                               att_name ? att_name : "attachment.py", &ex);
    if (!verdict) {
        bmq_script_extracted_clear (&ex);
        return bmq_envelope_error (req, "internal", "out of memory while checking the script");
    }
    bool valid = json_is_true (json_object_get (verdict, "is_valid"));
    const char *sha = json_string_value (json_object_get (verdict, "sha256"));
    bmq_audit_record (audit, req->cid, "script.request",
        json_pack ("{s:s, s:s, s:s?, s:I, s:s?}", "script_id", req->cid, "mode", mode, "source", ex.script ? ex.source : NULL,
                   "bytes", (json_int_t) (ex.script ? ex.len : reply_len), "script_sha256", sha));
    bmq_audit_record (audit, req->cid, "script.verdict",
        json_pack ("{s:s, s:s?, s:b, s:O, s:O*}", "script_id", req->cid, "script_sha256", sha, "is_valid", valid,
                   "errors", json_object_get (verdict, "errors"), "operator_list", json_object_get (verdict, "operator_list")));
    json_t *body = json_pack ("{s:s, s:s, s:o}", "script_id", req->cid, "status", valid ? "validated" : "rejected",
                              "verdict", verdict);
    if (ex.script) json_object_set_new (body, "script", json_stringn (ex.script, ex.len));
    if (valid && sha) {
        char subject[128], seal[BMQ_SEAL_MAX];      /* for one executor, expiring, single-use (issue 12) */
        const char *target = bmq_body_str (req, "target") && *bmq_body_str (req, "target") ? bmq_body_str (req, "target") : self->target;
        s_seal_subject (sha, subject, sizeof subject);
        if (bmq_seal_make (key, subject, target, self->seal_ttl_ms, seal) == 0)
            json_object_set_new (body, "seal", json_string (seal));
    }
    bmq_script_extracted_clear (&ex);
    return bmq_envelope_reply (req, BMQ_MSG_SCRIPT_REPLY, body);
}
