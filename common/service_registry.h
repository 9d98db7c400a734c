/* service_registry — every blendmq service, once: service_registry.def.
 *
 * From it come the service keys (keys.c), roles.def's SERVICES_ALL, the order
 * and instances `blendmq up`'s supervisor starts (cli_supervise.c), the ipc
 * endpoints of a private stack (cli_stack.c), the gateway's fail-fast names
 * (gateway_failfast.c); its BMQ_SERVICE_DEPLOY rows make the systemd units and
 * Kubernetes files (deploy_gen.c, ctest deploy.generated), and every deploy file
 * is checked against it (ctest deploy.services). */
#ifndef BMQ_SERVICE_REGISTRY_H
#define BMQ_SERVICE_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

typedef enum { BMQ_SVC_ONE, BMQ_SVC_PER_BLENDER, BMQ_SVC_POOL, BMQ_SVC_KEY_ONLY } bmq_svc_instances_t;

typedef struct {
    const char          *name;
    int                  order;          /* up's start order; 0: no process */
    bmq_svc_instances_t  instances;
    const char          *endpoints;      /* "config.key=socket …" */
    int                  port;           /* its endpoints' default tcp ports (127.0.0.1) are PORT, PORT+1…; 0: none */
    bool                 waited;         /* a request at the gateway can wait on it (fail fast) */
    const char          *health;         /* heartbeat | pool | self */
    const char          *doc;
} bmq_service_t;

/* The table, in up's start order (the key-only rows last), and its size. */
const bmq_service_t *bmq_services (size_t *count);
/* A service by name, or NULL. */
const bmq_service_t *bmq_service_find (const char *name);

/* In a list of service names (roles.def's SERVICES column), "*" is every
 * service with a process of its own (SERVICES_ALL). True when `list` names `name`. */
bool bmq_service_listed (const char *list, const char *name);
/* The i-th endpoint a service binds (0-based): its configuration key, its ipc
 * socket's name and its default (tcp://127.0.0.1:PORT+i), into the buffers.
 * false when it binds fewer. */
bool bmq_service_endpoint (const bmq_service_t *svc, size_t i, char *key, size_t key_len, char *sock, size_t sock_len,
                           char *def, size_t def_len);
/* `list` with "*" spelled out, into buf. */
void bmq_service_list_text (const char *list, char *buf, size_t len);

#endif
