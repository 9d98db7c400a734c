/* sandbox_seccomp — the sandbox's system-call filter (see sandbox_seccomp.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sandbox_seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *s_denied[] = {
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "keyctl", "add_key", "request_key",
    "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register", "bpf", "perf_event_open",
    "mount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount",
    "open_tree", "mount_setattr", "unshare", "setns",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot",
    "swapon", "swapoff", "syslog", "acct", "quotactl", "quotactl_fd", "iopl", "ioperm", "lookup_dcookie",
    "open_by_handle_at", "name_to_handle_at", "uselib", "vhangup",
    NULL
};

static const unsigned long s_ns_flags[] = { CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC,
                                            CLONE_NEWUTS, CLONE_NEWCGROUP };

static char s_summary[2048];
static pthread_once_t s_summary_once = PTHREAD_ONCE_INIT;

static void s_make_summary (void)
{
    size_t used = (size_t) snprintf (s_summary, sizeof s_summary, "seccomp: EPERM");
    for (const char **n = s_denied; *n && used < sizeof s_summary; n++)
        used += (size_t) snprintf (s_summary + used, sizeof s_summary - used, " %s", *n);
    if (used < sizeof s_summary)
        snprintf (s_summary + used, sizeof s_summary - used,
                  "; EPERM clone with CLONE_NEW* flags, personality except query, mknod/mknodat of devices;"
                  " ENOSYS clone3; other ABIs (i386 int 0x80, x32) kill the process");
}

const char *bmq_sandbox_seccomp_summary (void)
{
    pthread_once (&s_summary_once, s_make_summary);
    return s_summary;
}

static int s_build (scmp_filter_ctx ctx, const char **what)
{
    int rc;
    /* other ABIs: kill the whole process (seccomp_init's default is SCMP_ACT_KILL, the thread) */
    *what = "bad-arch action";
    if ((rc = seccomp_attr_set (ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) < 0)
        return rc;
    for (const char **n = s_denied; *n; n++) {
        int nr = seccomp_syscall_resolve_name (*n);
        *what = *n;
        if (nr == __NR_SCMP_ERROR)
            continue;                   /* unknown to this libseccomp: nothing to deny */
        if ((rc = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), nr, 0)) < 0)
            return rc;
    }
    *what = "clone";
    for (size_t i = 0; i < sizeof s_ns_flags / sizeof *s_ns_flags; i++)
        if ((rc = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), SCMP_SYS (clone), 1,
                                    SCMP_A0_64 (SCMP_CMP_MASKED_EQ, s_ns_flags[i], s_ns_flags[i]))) < 0)
            return rc;
    *what = "clone3";
    if ((rc = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (ENOSYS), SCMP_SYS (clone3), 0)) < 0)
        return rc;
    *what = "personality";
    /* exactly 0xffffffff, as glibc passes it (zero-extended); the kernel reads an unsigned
     * int, so a sign-extended -1 is a query too, but it is denied here: the safe side */
    if ((rc = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), SCMP_SYS (personality), 1,
                                SCMP_A0_64 (SCMP_CMP_NE, 0xffffffffUL))) < 0)
        return rc;
    *what = "mknod";
    const unsigned long types[] = { S_IFCHR, S_IFBLK };
    for (size_t i = 0; i < 2; i++) {
        if ((rc = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), SCMP_SYS (mknod), 1,
                                    SCMP_A1_32 (SCMP_CMP_MASKED_EQ, S_IFMT, types[i]))) < 0)
            return rc;
        if ((rc = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), SCMP_SYS (mknodat), 1,
                                    SCMP_A2_32 (SCMP_CMP_MASKED_EQ, S_IFMT, types[i]))) < 0)
            return rc;
    }
    return 0;
}

int bmq_sandbox_seccomp_fd (char *err, size_t errlen)
{
    const char *what = "init";
    scmp_filter_ctx ctx = seccomp_init (SCMP_ACT_ALLOW);
    if (!ctx) {
        snprintf (err, errlen, "cannot build the sandbox's system-call filter (seccomp_init)");
        return -1;
    }
    int rc = s_build (ctx, &what);
    int fd = -1;
    if (rc == 0) {
        fd = memfd_create ("blendmq-seccomp", MFD_CLOEXEC);
        if (fd < 0)
            rc = -errno;
    }
    if (rc == 0) {
        what = "export";
        rc = seccomp_export_bpf (ctx, fd);
    }
    if (rc == 0 && lseek (fd, 0, SEEK_SET) != 0)
        rc = -errno;
    seccomp_release (ctx);
    if (rc < 0) {
        if (fd >= 0)
            close (fd);
        snprintf (err, errlen, "cannot build the sandbox's system-call filter (%s): %s", what, strerror (-rc));
        return -1;
    }
    return fd;
}
