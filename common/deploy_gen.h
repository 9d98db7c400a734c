/* deploy_gen — the per-service deploy files made from the service registry
 * (service_registry.def's BMQ_SERVICE and BMQ_SERVICE_DEPLOY rows, issue 31):
 * deploy/systemd/blendmq-NAME.service (NAME@ for a POOL), and
 * deploy/kubernetes/{kustomization,blendmq,networkpolicy}.yaml. */
#ifndef BMQ_DEPLOY_GEN_H
#define BMQ_DEPLOY_GEN_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    char  path[128];              /* relative to the source tree */
    char *text;                 /* malloc'd; NULL: out of memory */
} bmq_deploy_file_t;

/* Every generated file, up to max, into files; their count. The caller frees each text. */
size_t bmq_deploy_files (bmq_deploy_file_t *files, size_t max);
/* NULL, or why the registry cannot be deployed (a service without a deploy
 * row, a deploy row without a service, a CONNECTS key nobody binds). */
const char *bmq_deploy_problem (void);

#endif
