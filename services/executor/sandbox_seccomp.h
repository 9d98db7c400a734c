/* sandbox_seccomp — the system-call filter of the script sandbox (libseccomp),
 * handed to bubblewrap as `--seccomp FD`: bwrap loads it (with no_new_privs)
 * into the sandboxed process right before exec, after it has set up its
 * namespaces, so bwrap itself is unaffected and everything inside is filtered.
 *
 * Default action ALLOW; denied (EPERM unless noted):
 *   ptrace, process_vm_readv/writev, kcmp, pidfd_getfd          (other processes' memory)
 *   keyctl, add_key, request_key                                 (kernel keyrings)
 *   userfaultfd, io_uring_*, bpf, perf_event_open                (kernel attack surface)
 *   mount, umount2, pivot_root, chroot, fsopen, fsconfig, fsmount, fspick, move_mount,
 *   open_tree, mount_setattr, unshare, setns                     (namespaces and mounts)
 *   clone with any CLONE_NEW* flag (an argument filter); clone3 → ENOSYS, so glibc
 *   falls back to clone, whose flags the filter can see
 *   kexec_load, kexec_file_load, init_module, finit_module, delete_module, reboot,
 *   swapon, swapoff, syslog, acct, quotactl, quotactl_fd, iopl, ioperm, lookup_dcookie,
 *   open_by_handle_at, name_to_handle_at, uselib, vhangup
 *   personality other than the query personality(0xffffffff)
 *   mknod / mknodat of character and block devices
 * Any other system-call ABI (i386 `int 0x80`, x32: the 0x40000000 bit on x86_64) is
 * not in the filter's architecture list: SCMP_FLTATR_ACT_BADARCH is KILL_PROCESS
 * (seccomp_init's default is SCMP_ACT_KILL, the thread only; made explicit here), and
 * libseccomp sends x32 numbers on x86_64 to that action too. */
#ifndef BMQ_SANDBOX_SECCOMP_H
#define BMQ_SANDBOX_SECCOMP_H

#include <stddef.h>

/* A readable fd (offset 0, close-on-exec) holding the exported BPF program;
 * -1 with err when libseccomp cannot build it (never run without it). */
int bmq_sandbox_seccomp_fd (char *err, size_t errlen);

/* The filter in words, for the run result's "isolation" list ("seccomp: ..."). */
const char *bmq_sandbox_seccomp_summary (void);

#endif
