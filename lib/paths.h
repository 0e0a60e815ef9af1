/*
 * paths.h — the places vnfs uses when the configuration names none: one
 * definition for the helper (vnfs.conf's defaults), the SPANK plugin and
 * vnfs-report.  etc/vnfs.conf, docs/CONFIG.md and the man pages show the
 * same values.
 */
#ifndef VNFS_PATHS_H
#define VNFS_PATHS_H

#define VNFS_RUN_DIR "/run/vnfs"
#define VNFS_DEFAULT_SOCKET VNFS_RUN_DIR "/vnfs.sock"     /* [helper] socket */
#define VNFS_DEFAULT_STATE_DIR "/var/lib/vnfs"            /* [helper] state_dir */
#define VNFS_DEFAULT_REPORT_DIR VNFS_DEFAULT_STATE_DIR "/reports"
#define VNFS_DEFAULT_HISTORY_PATH VNFS_DEFAULT_STATE_DIR "/history.db" /* [sqlite] path */
#define VNFS_DEFAULT_PIN_DIR "/sys/fs/bpf/vnfs"           /* [helper] pin_dir */

#endif /* VNFS_PATHS_H */
