/* deploy_gen — the per-service deploy files, made from the service registry
 * (service_registry.def, issue 31): each service's systemd unit, the endpoints
 * of the cluster's blendmq.yaml, the kustomization's resources and the
 * NetworkPolicies. Like config_docs.c, the generator is C, built from the .def
 * by X-macros: there is no second parser of the .def that could read it
 * differently. tests/deploy/test_deploy_gen.c checks the files (ctest
 * deploy.generated) and writes them (--write SOURCE_DIR).
 *
 * BMQ_DEPLOY_REGISTRY names the .def (a test build adds a fake sixth row). */
#include "deploy_gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef BMQ_DEPLOY_REGISTRY
#define BMQ_DEPLOY_REGISTRY "service_registry.def"
#endif

typedef enum { S_ONE, S_PER_BLENDER, S_POOL, S_KEY_ONLY } s_inst_t;
typedef enum { S_STRICT, S_SANDBOX } s_hard_t;

typedef struct {
    const char *name;
    s_inst_t    instances;
    const char *endpoints;          /* "config.key=socket …" */
    int         port;
} s_row_t;

typedef struct {
    const char *name, *summary, *connects, *public, *nowx, *unit_extra, *cluster_extra, *egress_https;
    s_hard_t    hardening;
    const char *replicas, *resources, *tmp, *state, *secrets, *container_extra;    /* POD (...) */
} s_dep_t;

static const s_row_t s_rows[] = {
#define WAITS(X)
#define NOWAIT
#define BINDS(ENDPOINTS, PORT) ENDPOINTS, PORT
#define BMQ_SERVICE(NAME, ORDER, INSTANCES, ENDPOINTS, WAIT, HEALTH, DOC) { NAME, S_##INSTANCES, ENDPOINTS },
#define BMQ_SERVICE_DEPLOY(...)
#define BMQ_SERVICE_USER(...)
#include BMQ_DEPLOY_REGISTRY
#undef BMQ_SERVICE
#undef BMQ_SERVICE_DEPLOY
#undef BMQ_SERVICE_USER
#undef WAITS
#undef NOWAIT
#undef BINDS
};
#define ROWS (sizeof s_rows / sizeof s_rows[0])

static const s_dep_t s_deps[] = {
#define BMQ_SERVICE(...)
#define POD(REPLICAS, RESOURCES, TMP, STATE, SECRETS, CONTAINER_EXTRA) REPLICAS, RESOURCES, TMP, STATE, SECRETS, CONTAINER_EXTRA
#define BMQ_SERVICE_DEPLOY(NAME, SUMMARY, CONNECTS, PUBLIC, HARDENING, NOWX, UNIT_EXTRA, CLUSTER_EXTRA, EGRESS_HTTPS, POD) \
    { NAME, SUMMARY, CONNECTS, PUBLIC, NOWX, UNIT_EXTRA, CLUSTER_EXTRA, EGRESS_HTTPS, S_##HARDENING, POD },
#define BMQ_SERVICE_USER(...)
#include BMQ_DEPLOY_REGISTRY
#undef BMQ_SERVICE
#undef BMQ_SERVICE_DEPLOY
#undef BMQ_SERVICE_USER
#undef POD
};
#define DEPS (sizeof s_deps / sizeof s_deps[0])

/* BMQ_SERVICE_USER rows: the services that run as a user of their own. */
typedef struct {
    const char *name, *user, *why;
    int         uid;
} s_user_t;

static const s_user_t s_users[] = {
#define BMQ_SERVICE(...)
#define BMQ_SERVICE_DEPLOY(...)
#define BMQ_SERVICE_USER(NAME, USER, UID, WHY) { NAME, USER, WHY, UID },
#include BMQ_DEPLOY_REGISTRY
#undef BMQ_SERVICE
#undef BMQ_SERVICE_DEPLOY
#undef BMQ_SERVICE_USER
    { NULL, NULL, NULL, 0 }
};
#define USERS (sizeof s_users / sizeof s_users[0] - 1)
#define SHARED_USER "blendmq"
#define SHARED_UID  10001

/* NAME's own user row; NULL: it runs as the shared blendmq. */
static const s_user_t *s_own_user (const char *name)
{
    for (size_t i = 0; i < USERS; i++)
        if (!strcmp (s_users[i].name, name)) return &s_users[i];
    return NULL;
}

#define GENERATED "Generated from common/service_registry.def (common/deploy_gen.c): edit that file, build,\n" \
                  "# then `build/bin/test_deploy_gen --write .`; ctest deploy.generated checks it.\n"

static const s_dep_t *s_dep (const char *name)
{
    for (size_t i = 0; i < DEPS; i++)
        if (!strcmp (s_deps[i].name, name)) return &s_deps[i];
    return NULL;
}

/* The i-th word of list (into buf); false past the last. */
static bool s_word (const char *list, size_t i, char *buf, size_t len)
{
    for (const char *p = list; *p; ) {
        p += strspn (p, " ");
        size_t n = strcspn (p, " ");
        if (!n) break;
        if (!i--) { snprintf (buf, len, "%.*s", (int) n, p); return true; }
        p += n;
    }
    return false;
}

/* The i-th endpoint of row: its key (into key) and port; false past the last. */
static bool s_endpoint (const s_row_t *row, size_t i, char *key, size_t len, int *port)
{
    char w[256];
    if (!s_word (row->endpoints, i, w, sizeof w)) return false;
    snprintf (key, len, "%.*s", (int) strcspn (w, "= "), w);
    *port = row->port + (int) i;
    return true;
}

/* The row that binds key, its port. NULL: none does. */
static const s_row_t *s_owner (const char *key, size_t klen, int *port)
{
    char k[160];
    for (size_t r = 0; r < ROWS; r++)
        for (size_t i = 0; s_endpoint (&s_rows[r], i, k, sizeof k, port); i++)
            if (strlen (k) == klen && !strncmp (k, key, klen)) return &s_rows[r];
    return NULL;
}

/* Does the word list `list` hold word? */
static bool s_has_word (const char *list, const char *word)
{
    size_t wl = strlen (word);
    for (const char *p = list; *p; ) {
        p += strspn (p, " ");
        size_t n = strcspn (p, " ");
        if (n == wl && !strncmp (p, word, n)) return true;
        p += n;
    }
    return false;
}

/* ---- systemd ------------------------------------------------------------------------- */

static const char s_keys_comment[] =
    "# Keys: /etc/blendmq/keys (0700, owner blendmq) holds this machine's own NAME.cert_secret\n"
    "# files, the public NAME.cert of the services it talks to, trusted/ (the public\n"
    "# certs it accepts) and the shared secrets (verdict.key, blender.token);\n"
    "# /etc/blendmq/blendmq.yaml points security.keys_dir there. ProtectSystem=strict\n"
    "# keeps /etc read-only for the service.\n";

static const char s_restart[] =
    "# Restarts, as `blendmq up`'s supervisor does on a dev stack: any crash or\n"
    "# kill (not a clean stop) restarts the unit after RestartSec; more than\n"
    "# StartLimitBurst starts within StartLimitIntervalSec ([Unit]) stop the crash\n"
    "# loop (systemctl reset-failed to retry). systemd 252 (Debian 12) has no\n"
    "# growing delay; from systemd 254 add RestartSteps=5 and RestartMaxDelaySec=30s\n"
    "# for the supervisor's doubling back-off.\n"
    "Restart=on-failure\n"
    "RestartSec=2s\n";

static const char s_strict[] =
    "NoNewPrivileges=yes\n"
    "PrivateTmp=yes\n"
    "PrivateDevices=yes\n"
    "DevicePolicy=closed\n"
    "ProtectSystem=strict\n"
    "ProtectHome=yes\n"
    "ProtectKernelTunables=yes\n"
    "ProtectKernelModules=yes\n"
    "ProtectKernelLogs=yes\n"
    "ProtectControlGroups=yes\n"
    "ProtectClock=yes\n"
    "ProtectHostname=yes\n"
    "ProtectProc=invisible\n"
    "ProcSubset=pid\n"
    "PrivateUsers=yes\n"
    "CapabilityBoundingSet=\n"
    "AmbientCapabilities=\n"
    "RestrictNamespaces=yes\n"
    "RestrictRealtime=yes\n"
    "RestrictSUIDSGID=yes\n"
    "LockPersonality=yes\n"
    "RemoveIPC=yes\n"
    "KeyringMode=private\n"
    "SystemCallArchitectures=native\n"
    "SystemCallFilter=@system-service\n"
    "SystemCallFilter=~@privileged @resources\n"
    "SystemCallErrorNumber=EPERM\n";

static const char s_sandbox[] =
    "NoNewPrivileges=yes\n"
    "PrivateTmp=yes\n"
    "PrivateDevices=yes\n"
    "DevicePolicy=closed\n"
    "ProtectSystem=strict\n"
    "ProtectHome=yes\n"
    "ProtectKernelModules=yes\n"
    "ProtectControlGroups=yes\n"
    "ProtectClock=yes\n"
    "ProtectHostname=yes\n"
    "CapabilityBoundingSet=\n"
    "AmbientCapabilities=\n"
    "RestrictRealtime=yes\n"
    "RestrictSUIDSGID=yes\n"
    "LockPersonality=yes\n"
    "RemoveIPC=yes\n"
    "KeyringMode=private\n"
    "SystemCallArchitectures=native\n"
    "SystemCallErrorNumber=EPERM\n"
    "# --- Relaxed for the script sandbox (bubblewrap, unprivileged user namespaces) ---\n"
    "# The executor starts sandboxed Blenders with `bwrap --unshare-all --proc /proc\n"
    "# --dev /dev ...` (services/executor/sandbox_bwrap.c). Compared with the other\n"
    "# units this one therefore:\n"
    "#  * sets no RestrictNamespaces=: bwrap creates user, mount, pid, net, ipc, uts\n"
    "#    and cgroup namespaces;\n"
    "#  * adds @mount to the syscall filter: bwrap mounts, pivot_root()s and unmounts\n"
    "#    inside its own user+mount namespace (never in the host's);\n"
    "#  * sets no ProtectKernelTunables=, ProtectKernelLogs=, ProtectProc=, ProcSubset=:\n"
    "#    they over-mount parts of /proc, and the kernel refuses a fresh procfs\n"
    "#    (bwrap --proc) inside a user namespace while the inherited /proc is\n"
    "#    partly hidden (fs/namespace.c, mount_too_revealing);\n"
    "#  * sets no PrivateUsers=: the sandbox maps its own uid in its own namespace;\n"
    "#  * sets no MemoryDenyWriteExecute=: Blender (run in the sandbox, which\n"
    "#    inherits this unit's filters) and its Python are not W^X-clean.\n"
    "# Kept: NoNewPrivileges=yes (bwrap in Debian 12 is not setuid: it relies on\n"
    "# unprivileged user namespaces, kernel.unprivileged_userns_clone=1, Debian's\n"
    "# default) and an empty CapabilityBoundingSet= (a new user namespace gets a\n"
    "# full capability set valid only inside it). The sandbox adds its own seccomp\n"
    "# filter, no network, read-only system and rlimits on top.\n"
    "SystemCallFilter=@system-service @mount\n"
    "SystemCallFilter=~@resources @raw-io @reboot @swap @module @obsolete @cpu-emulation @debug @clock\n";

/* The unit of a service with a user of its own: its keys dir, its state directory. */
static void s_own_keys_comment (FILE *out, const s_row_t *r, const s_user_t *u)
{
    fprintf (out, "# Runs as %s, a user of its own (%s).\n"
                  "# Keys: /etc/blendmq/keys-%s (0700, owner %s) holds its own %s.cert_secret and\n"
                  "# trusted/ (the public certs it accepts), copied from /etc/blendmq/keys by\n"
                  "# deploy/systemd/own-keys.sh %s (again after keys add-client/revoke); no other unit\n"
                  "# can read it (InaccessiblePaths=), nor can this one read /etc/blendmq/keys.\n"
                  "# ProtectSystem=strict keeps /etc read-only for the service.\n"
                  "Environment=BLENDMQ_SECURITY_KEYS_DIR=/etc/blendmq/keys-%s\n",
             u->user, u->why, r->name, u->user, r->name, r->name, r->name);
}

static void s_unit (FILE *out, const s_row_t *r, const s_dep_t *d)
{
    const s_user_t *own = s_own_user (r->name);
    const char *user = own ? own->user : SHARED_USER;
    const char *blender = r->instances == S_PER_BLENDER ? " blendmq-blender.service" : "";
    fputs ("# " GENERATED "[Unit]\n", out);
    if (r->instances == S_POOL) fprintf (out, "Description=blendmq %s %%i (%s)\n", r->name, d->summary);
    else fprintf (out, "Description=blendmq %s: %s\n", r->name, d->summary);
    fprintf (out, "Documentation=file:///usr/local/share/blendmq/README.md\n"
                  "After=network-online.target%s\nWants=network-online.target%s\n"
                  "PartOf=blendmq.target\nStartLimitIntervalSec=300\nStartLimitBurst=5\n\n[Service]\nType=simple\n%s",
             blender, blender, own ? "" : s_keys_comment);
    if (own) s_own_keys_comment (out, r, own);
    if (r->instances == S_POOL)
        fprintf (out, "# One instance per worker: systemctl enable --now blendmq-%s@1 blendmq-%s@2\n"
                      "SyslogIdentifier=blendmq-%s-%%i\n", r->name, r->name, r->name);
    fputs (d->unit_extra, out);
    fprintf (out, "ExecStart=/usr/local/bin/blendmq-%s --config /etc/blendmq/blendmq.yaml\n", r->name);
    if (*r->endpoints)
        fputs ("# binds ZeroMQ tcp endpoints: libzmq resolves bind addresses with getifaddrs (netlink)\n"
               "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK\n", out);
    else fputs ("# connects only: no netlink\nRestrictAddressFamilies=AF_UNIX AF_INET AF_INET6\n", out);
    if (d->hardening == S_STRICT) {
        if (*d->nowx) fprintf (out, "# %s\n", d->nowx);
        else fputs ("MemoryDenyWriteExecute=yes\n", out);
    }
    fprintf (out, "User=%s\nGroup=%s\nEnvironment=BLENDMQ_DATA_DIR=/usr/local/share/blendmq\n", user, user);
    fputs (s_restart, out);
    if (own) fprintf (out, "# its state (/var/lib/%s, 0700, owner %s) is the only writable path\n", user, user);
    else if (d->hardening == S_STRICT) fputs ("# state (spools, saved recipes) is the only writable path\n", out);
    fprintf (out, "StateDirectory=%s\nStateDirectoryMode=0700\nReadWritePaths=/var/lib/%s\n"
                  "WorkingDirectory=/var/lib/%s\nUMask=0077\n", user, user, user);
    for (size_t i = 0; i < USERS; i++) {
        if (own == &s_users[i]) continue;
        fprintf (out, "# %s runs as %s: its state and keys are out of this unit's reach\n"
                      "InaccessiblePaths=-/var/lib/%s -/etc/blendmq/keys-%s\n",
                 s_users[i].name, s_users[i].user, s_users[i].user, s_users[i].name);
    }
    fputs (d->hardening == S_STRICT ? s_strict : s_sandbox, out);
    fputs ("\n[Install]\nWantedBy=blendmq.target\n", out);
}

/* ---- Kubernetes ---------------------------------------------------------------------- */

static void s_kustomization (FILE *out)
{
    fputs ("# blendmq on Kubernetes: kubectl kustomize deploy/kubernetes | kubectl apply -f -\n"
           "# Keys are never in git: create the Secrets first (README.md in this folder).\n"
           "# " GENERATED
           "apiVersion: kustomize.config.k8s.io/v1beta1\n"
           "kind: Kustomization\n"
           "namespace: blendmq\n"
           "labels:\n"
           "  - pairs: {app.kubernetes.io/part-of: blendmq}\n"
           "images:\n"
           "  - name: blendmq            # built from deploy/container/Containerfile\n"
           "    newName: registry.example.org/blendmq\n"
           "    newTag: \"0.1.0\"\n"
           "resources:\n"
           "  - namespace.yaml\n", out);
    for (size_t r = 0; r < ROWS; r++)
        if (s_rows[r].instances != S_KEY_ONLY) fprintf (out, "  - %s.yaml\n", s_rows[r].name);
    fputs ("  - networkpolicy.yaml\n"
           "configMapGenerator:\n"
           "  - name: blendmq-config\n"
           "    files: [blendmq.yaml]\n"
           "  - name: blendmq-keys-init\n"
           "    files: [keys-init.sh]\n", out);
}

static void s_cluster_config (FILE *out)
{
    fputs ("# Connect addresses: the Services' DNS names. A service binds its own endpoints\n"
           "# on 0.0.0.0 through BLENDMQ_<SECTION>_<KEY> in its pod (ZeroMQ binds do not\n"
           "# resolve DNS names), so this one file serves every pod.\n"
           "# " GENERATED
           "log:\n"
           "  format: json\n"
           "security:\n"
           "  keys_dir: /run/blendmq/keys                     # copied from the Secrets by the keys-init container\n"
           "  verdict_key_file: /run/blendmq/keys/verdict.key\n", out);
    for (size_t r = 0; r < ROWS; r++) {
        const s_row_t *row = &s_rows[r];
        const s_dep_t *d = s_dep (row->name);
        char key[160], host[128];
        int port;
        if (!*row->endpoints || row->instances == S_KEY_ONLY) continue;
        if (row->instances == S_PER_BLENDER) snprintf (host, sizeof host, "blendmq-%s-0.blendmq-%s", row->name, row->name);
        else snprintf (host, sizeof host, "blendmq-%s", row->name);
        fprintf (out, "%s:\n", row->name);
        for (size_t i = 0; s_endpoint (row, i, key, sizeof key, &port); i++) {
            const char *dot = strchr (key, '.');
            if (dot && !strncmp (key, row->name, (size_t) (dot - key)) && row->name[dot - key] == 0)
                fprintf (out, "  %s: tcp://%s:%d\n", dot + 1, host, port);
        }
        if (d) fputs (d->cluster_extra, out);
    }
    fputs ("blender:\n"
           "  host: 127.0.0.1                                 # the blender container of the same pod\n"
           "  port: 9876\n"
           "  token_file: /run/blendmq/keys/blender.token\n", out);
}

static void s_select (FILE *out, const char *indent, const char *name)
{
    fprintf (out, "%s- podSelector: {matchLabels: {app.kubernetes.io/name: blendmq-%s}}\n", indent, name);
}

/* The ports of `to` that `from` connects to, as ", "-joined text (into buf); 0: none. */
static int s_ports_to (const s_dep_t *from, const s_row_t *to, char *buf, size_t len, bool yaml)
{
    char key[160];
    int port, n = 0;
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; s_endpoint (to, i, key, sizeof key, &port); i++)
        if (s_has_word (from->connects, key) && used < len) {
            if (yaml) used += (size_t) snprintf (buf + used, len - used, "        - {protocol: TCP, port: %d}\n", port);
            else used += (size_t) snprintf (buf + used, len - used, "%s%d", n ? "/" : "", port);
            n++;
        }
    return n;
}

static void s_policy (FILE *out, const s_row_t *row, const s_dep_t *d)
{
    char key[160], ports[512];
    int port;
    fprintf (out, "---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: %s\nspec:\n"
                  "  podSelector: {matchLabels: {app.kubernetes.io/name: blendmq-%s}}\n  policyTypes: [Ingress, Egress]\n",
             row->name, row->name);
    bool any = false;
    if (*d->public) {
        fputs ("  ingress:\n    - ports:                      # clients from anywhere: CURVE keys and HTTP tokens authenticate them\n", out);
        any = true;
        for (const char *p = d->public; *p; ) {
            p += strspn (p, " ");
            size_t n = strcspn (p, " ");
            if (!n) break;
            const char *colon = memchr (p, ':', n);
            if (colon) fprintf (out, "        - {protocol: TCP, port: %d}\n", atoi (colon + 1));
            else if (s_owner (p, n, &port)) fprintf (out, "        - {protocol: TCP, port: %d}\n", port);
            p += n;
        }
    }
    for (size_t i = 0; s_endpoint (row, i, key, sizeof key, &port); i++) {
        bool first = true;
        for (size_t c = 0; c < DEPS; c++) {
            if (!s_has_word (s_deps[c].connects, key)) continue;
            if (!any) fputs ("  ingress:\n", out);
            any = true;
            if (first) fputs ("    - from:\n", out);
            first = false;
            s_select (out, "        ", s_deps[c].name);
        }
        if (!first) fprintf (out, "      ports:\n        - {protocol: TCP, port: %d}\n", port);
    }
    if (!any) fputs ("  ingress: []\n", out);
    any = false;
    for (size_t r = 0; r < ROWS; r++) {
        if (!s_ports_to (d, &s_rows[r], ports, sizeof ports, true)) continue;
        if (!any) fputs ("  egress:\n", out);
        any = true;
        fputs ("    - to:\n", out);
        s_select (out, "        ", s_rows[r].name);
        fprintf (out, "      ports:\n%s", ports);
    }
    if (*d->egress_https) {
        if (!any) fputs ("  egress:\n", out);
        any = true;
        fprintf (out, "    - to:                         # %s\n"
                      "        - ipBlock:\n"
                      "            cidr: 0.0.0.0/0\n"
                      "            except: [10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16]\n"
                      "      ports:\n"
                      "        - {protocol: TCP, port: 443}\n", d->egress_https);
    }
    if (!any) fputs ("  egress: []\n", out);
}

static void s_networkpolicy (FILE *out)
{
    char ports[512];
    int port;
    fputs ("# " GENERATED
           "# Default deny, then only the flows blendmq uses (all ZeroMQ hops are CURVE):\n", out);
    for (size_t c = 0; c < DEPS; c++) {
        if (!*s_deps[c].public) continue;
        fprintf (out, "#   clients   -> %s", s_deps[c].name);
        for (const char *p = s_deps[c].public; *p; ) {
            p += strspn (p, " ");
            size_t n = strcspn (p, " ");
            if (!n) break;
            const char *colon = memchr (p, ':', n);
            if (colon) fprintf (out, " %d (%.*s)", atoi (colon + 1), (int) (colon - p), p);
            else if (s_owner (p, n, &port)) fprintf (out, " %d", port);
            p += n;
        }
        fputc ('\n', out);
    }
    for (size_t c = 0; c < DEPS; c++) {
        bool first = true;
        for (size_t r = 0; r < ROWS; r++) {
            if (!s_ports_to (&s_deps[c], &s_rows[r], ports, sizeof ports, false)) continue;
            if (first) fprintf (out, "#   %-9s ->", s_deps[c].name);
            fprintf (out, "%s %s %s", first ? "" : ",", s_rows[r].name, ports);
            first = false;
        }
        if (*s_deps[c].egress_https) {
            if (first) fprintf (out, "#   %-9s ->", s_deps[c].name);
            fprintf (out, "%s the internet 443 (%s)", first ? "" : ",", s_deps[c].egress_https);
            first = false;
        }
        if (!first) fputc ('\n', out);
    }
    fputs ("#   everyone  -> cluster DNS\n"
           "apiVersion: networking.k8s.io/v1\n"
           "kind: NetworkPolicy\n"
           "metadata:\n"
           "  name: default-deny\n"
           "spec:\n"
           "  podSelector: {}\n"
           "  policyTypes: [Ingress, Egress]\n"
           "---\n"
           "apiVersion: networking.k8s.io/v1\n"
           "kind: NetworkPolicy\n"
           "metadata:\n"
           "  name: allow-dns\n"
           "spec:\n"
           "  podSelector: {}\n"
           "  policyTypes: [Egress]\n"
           "  egress:\n"
           "    - to:\n"
           "        - namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: kube-system}}\n"
           "          podSelector: {matchLabels: {k8s-app: kube-dns}}\n"
           "      ports:\n"
           "        - {protocol: UDP, port: 53}\n"
           "        - {protocol: TCP, port: 53}\n", out);
    for (size_t r = 0; r < ROWS; r++) {
        const s_dep_t *d = s_dep (s_rows[r].name);
        if (s_rows[r].instances != S_KEY_ONLY && d) s_policy (out, &s_rows[r], d);
    }
}

/* The name of a container port: "bus" for the first endpoint, else its socket's last word
 * ("executor-events": events). */
static void s_port_name (const s_row_t *row, size_t i, char *buf, size_t len)
{
    char w[256];
    if (!s_word (row->endpoints, i, w, sizeof w)) { snprintf (buf, len, "port%zu", i); return; }
    const char *eq = strchr (w, '='), *word = eq ? eq + 1 : w, *dash = strrchr (word, '-');
    snprintf (buf, len, "%s", i == 0 ? "bus" : dash ? dash + 1 : word);
}

/* The gateway's non-bus public port (PUBLIC's name:PORT): its name and port; false: none. */
static bool s_extra_port (const s_dep_t *d, size_t i, char *name, size_t len, int *port)
{
    char w[64];
    for (size_t k = 0, found = 0; s_word (d->public, k, w, sizeof w); k++) {
        char *colon = strchr (w, ':');
        if (!colon) continue;
        if (found++ == i) { *colon = 0; snprintf (name, len, "%s", w); *port = atoi (colon + 1); return true; }
    }
    return false;
}

static const char s_restart_k8s[] =
    "      # Kubernetes restarts a crashed or killed container by itself (the only\n"
    "      # policy a Deployment/StatefulSet allows), backing off 10 s, 20 s, 40 s\n"
    "      # ... up to 5 min, reset after 10 min up: `blendmq up`'s supervisor\n"
    "      # does the same on a dev stack (200 ms doubling to 5 s).\n"
    "      restartPolicy: Always\n"
    "      automountServiceAccountToken: false\n";

static const char s_blender_pod[] =
    "      # The script sandbox is bubblewrap: it creates user, mount, pid and net\n"
    "      # namespaces and mounts a fresh /proc inside them. Without privileges that\n"
    "      # needs (README.md, \"The executor pod\"): a pod user namespace\n"
    "      # (hostUsers: false; Kubernetes >= 1.30 with UserNamespacesSupport), an\n"
    "      # unmasked /proc for the executor container (procMount: Unmasked;\n"
    "      # ProcMountType), and a seccomp/AppArmor policy that allows unshare,\n"
    "      # mount and pivot_root (the runtime's default profiles refuse them).\n"
    "      hostUsers: false\n";

/* The pod's securityContext: the shared uid 10001, or the service's own (BMQ_SERVICE_USER). */
static void s_pod_security (FILE *out, const char *name)
{
    const s_user_t *own = s_own_user (name);
    int uid = own ? own->uid : SHARED_UID;
    if (own) fprintf (out, "      # its own uid, no other pod's (%s)\n", own->why);
    fprintf (out, "      securityContext:\n"
                  "        runAsNonRoot: true\n"
                  "        runAsUser: %d\n"
                  "        runAsGroup: %d\n"
                  "        fsGroup: %d\n"
                  "        seccompProfile: {type: RuntimeDefault}\n", uid, uid, uid);
}

static const char s_container_security[] =
    "          securityContext:\n"
    "            runAsNonRoot: true\n"
    "            allowPrivilegeEscalation: false\n"
    "            privileged: false\n"
    "            readOnlyRootFilesystem: true\n"
    "            capabilities: {drop: [ALL]}\n";

static const char s_sandbox_security[] =
    "          securityContext:\n"
    "            runAsNonRoot: true\n"
    "            allowPrivilegeEscalation: false    # bwrap is not setuid: it needs no privilege gain\n"
    "            privileged: false\n"
    "            readOnlyRootFilesystem: true\n"
    "            capabilities: {drop: [ALL]}        # a new user namespace has its own full set, valid only inside it\n"
    "            procMount: Unmasked                # bwrap --proc: the kernel refuses a new procfs over a masked /proc\n"
    "            seccompProfile: {type: Unconfined} # or Localhost with unshare/mount/pivot_root allowed; the sandbox\n"
    "                                               # adds its own libseccomp filter to every sandboxed Blender\n"
    "            appArmorProfile: {type: Unconfined}   # the runtime's default AppArmor profile denies mount\n";

static const char s_blender_container[] =
    "        - name: blender\n"
    "          image: blendmq\n"
    "          args: [blender, --host, 127.0.0.1, --port, \"9876\", --token-file, /run/blendmq/keys/blender.token, --reset-scene]\n"
    "          readinessProbe: {tcpSocket: {port: 9876}, periodSeconds: 10}\n"
    "          resources:\n"
    "            requests: {cpu: \"1\", memory: 1Gi}\n"
    "            limits: {memory: 8Gi}\n"
    "          securityContext:\n"
    "            runAsNonRoot: true\n"
    "            allowPrivilegeEscalation: false\n"
    "            privileged: false\n"
    "            readOnlyRootFilesystem: true\n"
    "            capabilities: {drop: [ALL]}\n"
    "          volumeMounts:\n"
    "            - {name: run, mountPath: /run/blendmq, readOnly: true}\n"
    "            - {name: tmp, mountPath: /tmp}\n"
    "            - {name: state, mountPath: /var/lib/blendmq}\n";

/* key as an environment name's part: upper case, '.' and '-' as '_' (config.c's BLENDMQ_<SECTION>_<KEY>). */
static void s_env_name (FILE *out, const char *key)
{
    for (const char *p = key; *p; p++)
        fputc (*p == '.' || *p == '-' ? '_' : (*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p), out);
}

/* deploy/kubernetes/NAME.yaml: its workload, its Service (when it binds), its autoscaler (a POOL). */
static void s_workload (FILE *out, const s_row_t *r, const s_dep_t *d)
{
    const char *n = r->name;
    bool blender = r->instances == S_PER_BLENDER, claim = !strncmp (d->state, "claim:", 6);
    bool stateful = blender || claim;
    char key[160], pname[64], cpu[32] = "", mem[32] = "", lim[32] = "", w[64];
    int port, first_port = 0;
    s_word (d->resources, 0, cpu, sizeof cpu);
    s_word (d->resources, 1, mem, sizeof mem);
    s_word (d->resources, 2, lim, sizeof lim);
    fputs ("# " GENERATED, out);
    if (blender)
        fputs ("# One pod per Blender: the executor and its headless Blender share the pod\n"
               "# (loopback link, token from the same keys dir). More Blenders: raise replicas\n"
               "# and name each pod in gateway.executors (README.md in this folder).\n", out);
    fprintf (out, "apiVersion: apps/v1\nkind: %s\nmetadata:\n  name: blendmq-%s\n  labels: {app.kubernetes.io/name: blendmq-%s}\nspec:\n",
             stateful ? "StatefulSet" : "Deployment", n, n);
    if (stateful) fprintf (out, "  serviceName: blendmq-%s\n", n);
    fprintf (out, "  replicas: %s\n  selector:\n    matchLabels: {app.kubernetes.io/name: blendmq-%s}\n"
                  "  template:\n    metadata:\n      labels: {app.kubernetes.io/name: blendmq-%s}\n    spec:\n%s",
             d->replicas, n, n, s_restart_k8s);
    if (blender) fputs (s_blender_pod, out);
    s_pod_security (out, n);
    fputs ("      initContainers:\n        - name: keys-init\n          image: blendmq\n"
           "          command: [/bin/sh, /etc/blendmq/init/keys-init.sh]\n", out);
    fputs (s_container_security, out);
    fputs ("          volumeMounts:\n"
           "            - {name: run, mountPath: /run/blendmq}\n"
           "            - {name: keys-init, mountPath: /etc/blendmq/init, readOnly: true}\n"
           "            - {name: public, mountPath: /secrets/public, readOnly: true}\n"
           "            - {name: own, mountPath: /secrets/own, readOnly: true}\n", out);
    for (size_t i = 0; s_word (d->secrets, i, w, sizeof w); i++) {
        w[strcspn (w, "?")] = 0;
        char *colon = strchr (w, ':');
        if (colon) *colon++ = 0;
        fprintf (out, "            - {name: %s, mountPath: /secrets/%s, readOnly: true}\n", w, colon ? colon : w);
    }
    fprintf (out, "      containers:\n        - name: %s\n          image: blendmq\n          args: [%s]\n", n, n);
    if (*r->endpoints || blender) {
        fputs ("          env:\n", out);
        if (blender) {           /* each pod is its own executor: its name is the pod's */
            fputs ("            - name: BLENDMQ_", out);
            s_env_name (out, n);
            fputs ("_NAME\n              valueFrom: {fieldRef: {fieldPath: metadata.name}}\n", out);
        }
        for (size_t i = 0; s_endpoint (r, i, key, sizeof key, &port); i++) {
            fputs ("            - {name: BLENDMQ_", out);
            s_env_name (out, key);
            fprintf (out, ", value: \"tcp://0.0.0.0:%d\"}\n", port);
        }
    }
    fputs (d->container_extra, out);
    bool ports = false;
    for (size_t i = 0; s_endpoint (r, i, key, sizeof key, &port); i++) {
        if (!ports) fputs ("          ports:\n", out);
        ports = true;
        if (!i) first_port = port;
        s_port_name (r, i, pname, sizeof pname);
        fprintf (out, "            - {name: %s, containerPort: %d}\n", pname, port);
    }
    int http = 0;
    for (size_t i = 0; s_extra_port (d, i, pname, sizeof pname, &port); i++) {
        if (!ports) fputs ("          ports:\n", out);
        ports = true;
        if (!http) http = port;
        fprintf (out, "            - {name: %s, containerPort: %d}\n", pname, port);
    }
    if (http)
        fprintf (out, "          readinessProbe: {httpGet: {path: /healthz, port: %d}, periodSeconds: 10}\n"
                      "          livenessProbe: {httpGet: {path: /healthz, port: %d}, initialDelaySeconds: 20, periodSeconds: 20}\n",
                 http, http);
    else if (first_port) {
        fprintf (out, "          readinessProbe: {tcpSocket: {port: %d}, periodSeconds: 10}\n", first_port);
        if (!blender)       /* its Blender's link is the executor's own: a liveness restart would cut it */
            fprintf (out, "          livenessProbe: {tcpSocket: {port: %d}, initialDelaySeconds: 20, periodSeconds: 20}\n", first_port);
    }
    fprintf (out, "          resources:\n            requests: {cpu: %s, memory: %s}\n            limits: {memory: %s}\n", cpu, mem, lim);
    fputs (d->hardening == S_SANDBOX ? s_sandbox_security : s_container_security, out);
    fputs ("          volumeMounts:\n"
           "            - {name: config, mountPath: /etc/blendmq/blendmq.yaml, subPath: blendmq.yaml, readOnly: true}\n"
           "            - {name: run, mountPath: /run/blendmq}\n"
           "            - {name: tmp, mountPath: /tmp}\n", out);
    if (claim) fprintf (out, "            - {name: %s-data, mountPath: /var/lib/blendmq/%s}\n", n, n);
    else if (*d->state) fputs ("            - {name: state, mountPath: /var/lib/blendmq}\n", out);
    if (blender) fputs (s_blender_container, out);
    fprintf (out, "      volumes:\n"
                  "        - {name: config, configMap: {name: blendmq-config}}\n"
                  "        - {name: keys-init, configMap: {name: blendmq-keys-init}}\n"
                  "        - {name: run, emptyDir: {medium: Memory, sizeLimit: 16Mi}}\n"
                  "        - {name: tmp, emptyDir: {sizeLimit: %s}}\n", d->tmp);
    if (*d->state && !claim) fprintf (out, "        - {name: state, emptyDir: {sizeLimit: %s}}\n", d->state);
    fprintf (out, "        - {name: public, secret: {secretName: blendmq-public, defaultMode: 0400}}\n"
                  "        - {name: own, secret: {secretName: blendmq-key-%s, defaultMode: 0400}}\n", n);
    for (size_t i = 0; s_word (d->secrets, i, w, sizeof w); i++) {
        bool optional = strchr (w, '?') != NULL;
        w[strcspn (w, "?")] = 0;
        char *colon = strchr (w, ':');
        if (colon) *colon++ = 0;
        fprintf (out, "        - {name: %s, secret: {secretName: blendmq-%s, defaultMode: 0400%s}}\n", w, colon ? colon : w,
                 optional ? ", optional: true" : "");
    }
    if (claim)
        fprintf (out, "  volumeClaimTemplates:\n    - metadata: {name: %s-data}\n      spec:\n        accessModes: [ReadWriteOnce]\n"
                      "        resources: {requests: {storage: %s}}\n", n, d->state + 6);
    if (ports) {
        fprintf (out, "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: blendmq-%s\nspec:\n", n);
        if (blender) fprintf (out, "  clusterIP: None                 # headless: blendmq-%s-N.blendmq-%s per pod\n", n, n);
        fprintf (out, "  selector: {app.kubernetes.io/name: blendmq-%s}\n  ports:\n", n);
        for (size_t i = 0; s_endpoint (r, i, key, sizeof key, &port); i++) {
            s_port_name (r, i, pname, sizeof pname);
            fprintf (out, "    - {name: %s, port: %d}\n", pname, port);
        }
        for (size_t i = 0; s_extra_port (d, i, pname, sizeof pname, &port); i++)
            fprintf (out, "    - {name: %s, port: %d}\n", pname, port);
    }
    if (r->instances == S_POOL)
        fprintf (out, "---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: blendmq-%s\nspec:\n"
                      "  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: blendmq-%s}\n"
                      "  minReplicas: %d\n  maxReplicas: 10\n  metrics:\n    - type: Resource\n      resource:\n"
                      "        name: cpu\n        target: {type: Utilization, averageUtilization: 70}\n",
                 n, n, atoi (d->replicas) > 0 ? atoi (d->replicas) : 1);
}

/* ---- the files ----------------------------------------------------------------------- */

static char *s_text (void (*fn) (FILE *, const s_row_t *, const s_dep_t *), void (*whole) (FILE *),
                     const s_row_t *r, const s_dep_t *d)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream (&text, &size);
    if (!out) return NULL;
    if (fn) fn (out, r, d);
    else whole (out);
    return fclose (out) ? (free (text), NULL) : text;
}

const char *bmq_deploy_problem (void)
{
    static char why[256];
    for (size_t r = 0; r < ROWS; r++) {
        if (s_rows[r].instances == S_KEY_ONLY) continue;
        if (!s_dep (s_rows[r].name)) {
            snprintf (why, sizeof why, "service %s has no BMQ_SERVICE_DEPLOY row", s_rows[r].name);
            return why;
        }
    }
    for (size_t i = 0; i < USERS; i++) {
        const s_row_t *row = NULL;
        for (size_t r = 0; r < ROWS; r++)
            if (!strcmp (s_rows[r].name, s_users[i].name)) row = &s_rows[r];
        if (!row || row->instances == S_KEY_ONLY) {
            snprintf (why, sizeof why, "BMQ_SERVICE_USER %s: no service with a process of that name", s_users[i].name);
            return why;
        }
        if (!strcmp (s_users[i].user, SHARED_USER) || strncmp (s_users[i].user, "blendmq-", 8) || s_users[i].uid == SHARED_UID
            || s_users[i].uid < 1000) {
            snprintf (why, sizeof why, "BMQ_SERVICE_USER %s: its user must be blendmq-X and its uid >= 1000, neither %s's (%d)",
                      s_users[i].name, SHARED_USER, SHARED_UID);
            return why;
        }
        for (size_t j = 0; j < i; j++)
            if (!strcmp (s_users[j].user, s_users[i].user) || s_users[j].uid == s_users[i].uid || !strcmp (s_users[j].name, s_users[i].name)) {
                snprintf (why, sizeof why, "BMQ_SERVICE_USER %s and %s share a row, a user or a uid", s_users[j].name, s_users[i].name);
                return why;
            }
    }
    for (size_t c = 0; c < DEPS; c++) {
        bool known = false;
        for (size_t r = 0; r < ROWS; r++) known |= !strcmp (s_rows[r].name, s_deps[c].name) && s_rows[r].instances != S_KEY_ONLY;
        if (!known) { snprintf (why, sizeof why, "BMQ_SERVICE_DEPLOY %s: no service with a process of that name", s_deps[c].name); return why; }
        char w[64];
        if (!s_word (s_deps[c].resources, 2, w, sizeof w) || s_word (s_deps[c].resources, 3, w, sizeof w) || !*s_deps[c].tmp
            || atoi (s_deps[c].replicas) < 1) {
            snprintf (why, sizeof why, "%s: POD wants replicas >= 1, \"CPU MEMORY LIMIT\" and a /tmp size", s_deps[c].name);
            return why;
        }
        for (size_t i = 0; s_word (s_deps[c].public, i, w, sizeof w); i++) {
            int port;
            const char *colon = strchr (w, ':');
            const s_row_t *owner = colon ? NULL : s_owner (w, strlen (w), &port);
            if (colon ? atoi (colon + 1) < 1 || atoi (colon + 1) > 65535 : !owner || strcmp (owner->name, s_deps[c].name)) {
                snprintf (why, sizeof why, "%s: PUBLIC %s is neither an endpoint it binds nor name:PORT", s_deps[c].name, w);
                return why;
            }
        }
        for (const char *p = s_deps[c].connects; *p; ) {
            p += strspn (p, " ");
            size_t n = strcspn (p, " ");
            int port;
            if (n && !s_owner (p, n, &port)) {
                snprintf (why, sizeof why, "%s connects to %.*s, which no service binds", s_deps[c].name, (int) n, p);
                return why;
            }
            p += n;
        }
    }
    return NULL;
}

size_t bmq_deploy_files (bmq_deploy_file_t *files, size_t max)
{
    size_t n = 0;
    for (size_t r = 0; r < ROWS && n < max; r++) {
        const s_dep_t *d = s_dep (s_rows[r].name);
        if (s_rows[r].instances == S_KEY_ONLY || !d) continue;
        snprintf (files[n].path, sizeof files[n].path, "deploy/systemd/blendmq-%s%s.service", s_rows[r].name,
                  s_rows[r].instances == S_POOL ? "@" : "");
        files[n].text = s_text (s_unit, NULL, &s_rows[r], d);
        n++;
    }
    for (size_t r = 0; r < ROWS && n < max; r++) {
        const s_dep_t *d = s_dep (s_rows[r].name);
        if (s_rows[r].instances == S_KEY_ONLY || !d) continue;
        snprintf (files[n].path, sizeof files[n].path, "deploy/kubernetes/%s.yaml", s_rows[r].name);
        files[n].text = s_text (s_workload, NULL, &s_rows[r], d);
        n++;
    }
    static const struct { const char *path; void (*fn) (FILE *); } whole[] = {
        { "deploy/kubernetes/kustomization.yaml", s_kustomization },
        { "deploy/kubernetes/blendmq.yaml", s_cluster_config },
        { "deploy/kubernetes/networkpolicy.yaml", s_networkpolicy },
    };
    for (size_t i = 0; i < sizeof whole / sizeof whole[0] && n < max; i++, n++) {
        snprintf (files[n].path, sizeof files[n].path, "%s", whole[i].path);
        files[n].text = s_text (NULL, whole[i].fn, NULL, NULL);
    }
    return n;
}
