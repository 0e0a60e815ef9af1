/*
 * hooks.c — the table of hooked kernel NFS client functions (see hooks.h).
 *
 * Every hook runs in the task that made the system call, so the cgroup the
 * probes see is the caller's: the table deliberately holds no RPC completion
 * or writeback function (those run in rpciod and kworker threads).
 *
 * Several functions may count as one operation: an open reaches the NFSv3
 * client through ->open (nfs_file_open), the NFSv4 client through ->open
 * (nfs4_file_open) for a cached name and through ->atomic_open
 * (nfs_atomic_open) otherwise.  nfs_atomic_open counts only when it opened
 * the file itself; when it falls back to finish_no_open() the VFS calls ->open
 * next, which counts.  Functions missing from the running kernel are skipped
 * with a log line (nfs3_listxattr exists only with NFSv3 ACL support).
 * NFSv4 has its own ->open and ->flush (nfs4_file_*); the other file and
 * inode operations are shared with NFSv3.
 */
#include "helper/kernel/hooks.h"

/* Flags of the page-cache fills that count as mmap_read. */
#define PAGE_FILL (VNFS_HOOK_OUTSIDE_READ | VNFS_HOOK_BYTES_FROM_OBJECT)

/* How a function's result reads when no BTF describes it (Linux 6.1). */
#define RESULT_INT32 .fallback_result_kind = VNFS_RESULT_INT, .fallback_result_32bit = true
#define RESULT_LONG .fallback_result_kind = VNFS_RESULT_INT /* ssize_t */
#define RESULT_POINTER .fallback_result_kind = VNFS_RESULT_POINTER
#define RESULT_VOID .fallback_result_kind = VNFS_RESULT_VOID

#define HOOK(name, op, kind, hook_flags, object_argument, result)                              \
	{ .function = name, .operation = VNFS_OP_##op, .object_kind = VNFS_OBJECT_##kind,      \
	  .flags = hook_flags, .fallback_object_argument = object_argument, RESULT_##result }
/* The inode operations that take the mount's idmap first (5.12 on). */
#define IDMAPPED_HOOK(name, op, kind, object_argument)                                        \
	{ .function = name, .operation = VNFS_OP_##op, .object_kind = VNFS_OBJECT_##kind,      \
	  .fallback_object_argument = object_argument, RESULT_INT32,                           \
	  .fallback_idmap_first = true }

const struct vnfs_hook vnfs_hooks[] = {
	HOOK("nfs_file_read", READ, KIOCB, VNFS_HOOK_BYTES_FROM_RESULT, 0, LONG),
	HOOK("nfs_file_write", WRITE, KIOCB, VNFS_HOOK_BYTES_FROM_RESULT, 0, LONG),
	HOOK("nfs_readahead", MMAP_READ, READAHEAD, PAGE_FILL, 0, VOID),
	HOOK("nfs_read_folio", MMAP_READ, FOLIO, PAGE_FILL, 1, INT32),
	/* Before 5.19 (read_folio) and 5.18 (NFS's readahead): pages one at a
	 * time, and a list of them (file, mapping, pages, nr_pages). */
	HOOK("nfs_readpage", MMAP_READ, PAGE, PAGE_FILL, 1, INT32),
	{ .function = "nfs_readpages", .operation = VNFS_OP_MMAP_READ, .object_kind = VNFS_OBJECT_FILE,
	  .flags = VNFS_HOOK_OUTSIDE_READ | VNFS_HOOK_BYTES_FROM_PAGES,
	  .fallback_object_argument = 0, .fallback_file_argument = 3, RESULT_INT32 },
	HOOK("nfs_file_open", OPEN, FILE, 0, 1, INT32),
	HOOK("nfs4_file_open", OPEN, FILE, 0, 1, INT32),
	/* (struct inode *dir, struct dentry *, struct file *, unsigned, umode_t) */
	{ .function = "nfs_atomic_open", .operation = VNFS_OP_OPEN, .object_kind = VNFS_OBJECT_INODE,
	  .flags = VNFS_HOOK_COUNT_IF_OPENED | VNFS_HOOK_CREATE_IF_CREATED,
	  .fallback_object_argument = 0,
	  .fallback_file_argument = 2, RESULT_INT32 },
	/* NFSv2/v3 from Linux 6.14 (same arguments): a create with O_CREAT,
	 * then finish_open(), which calls ->open (nfs_file_open), which counts. */
	{ .function = "nfs_atomic_open_v23", .operation = VNFS_OP_CREATE,
	  .object_kind = VNFS_OBJECT_INODE, .flags = VNFS_HOOK_COUNT_IF_CREATED,
	  .fallback_object_argument = 0, .fallback_file_argument = 2, RESULT_INT32 },
	HOOK("nfs_file_release", CLOSE, FILE, 0, 1, INT32),
	HOOK("nfs_file_flush", FLUSH, FILE, 0, 0, INT32),
	HOOK("nfs4_file_flush", FLUSH, FILE, 0, 0, INT32),
	HOOK("nfs_file_fsync", FSYNC, FILE, 0, 0, INT32),
	HOOK("nfs_file_mmap", MMAP, FILE, 0, 0, INT32),
	/* Linux 6.17 replaced ->mmap with ->mmap_prepare, before the mapping exists. */
	HOOK("nfs_file_mmap_prepare", MMAP, MMAP_DESC, 0, 0, INT32),
	HOOK("nfs_lock", LOCK, FILE, 0, 0, INT32),
	HOOK("nfs_flock", LOCK, FILE, 0, 0, INT32),
	IDMAPPED_HOOK("nfs_getattr", GETATTR, PATH, 1),
	IDMAPPED_HOOK("nfs_setattr", SETATTR, DENTRY, 1),
	/* (struct inode *dir, struct dentry *, unsigned int flags) */
	{ .function = "nfs_lookup", .operation = VNFS_OP_LOOKUP, .object_kind = VNFS_OBJECT_INODE,
	  .flags = VNFS_HOOK_NEGATIVE_IS_ERROR, .fallback_object_argument = 0,
	  .fallback_file_argument = 1, RESULT_POINTER },
	IDMAPPED_HOOK("nfs_permission", ACCESS, INODE, 1),
	IDMAPPED_HOOK("nfs_create", CREATE, INODE, 1),
	HOOK("nfs_link", LINK, INODE, 0, 1, INT32),
	HOOK("nfs_unlink", UNLINK, INODE, 0, 0, INT32),
	IDMAPPED_HOOK("nfs_symlink", SYMLINK, INODE, 1),
	IDMAPPED_HOOK("nfs_mkdir", MKDIR, INODE, 1),
	HOOK("nfs_rmdir", RMDIR, INODE, 0, 0, INT32),
	IDMAPPED_HOOK("nfs_rename", RENAME, INODE, 1),
	HOOK("nfs_readdir", READDIR, FILE, 0, 0, INT32),
	HOOK("nfs4_listxattr", LISTXATTR, DENTRY, 0, 0, LONG),
	HOOK("nfs3_listxattr", LISTXATTR, DENTRY, 0, 0, LONG),
};

const size_t vnfs_hook_count = sizeof(vnfs_hooks) / sizeof(vnfs_hooks[0]);

_Static_assert(sizeof(vnfs_hooks) / sizeof(vnfs_hooks[0]) <= VNFS_MAX_HOOKS,
	       "more hooked functions than BPF hook slots (VNFS_MAX_HOOKS)");

const char *vnfs_object_struct_name(enum vnfs_object_kind kind)
{
	switch (kind) {
	case VNFS_OBJECT_FILE: return "file";
	case VNFS_OBJECT_KIOCB: return "kiocb";
	case VNFS_OBJECT_INODE: return "inode";
	case VNFS_OBJECT_DENTRY: return "dentry";
	case VNFS_OBJECT_PATH: return "path";
	case VNFS_OBJECT_READAHEAD: return "readahead_control";
	case VNFS_OBJECT_FOLIO: return "folio";
	case VNFS_OBJECT_MMAP_DESC: return "vm_area_desc";
	case VNFS_OBJECT_PAGE: return "page";
	case VNFS_OBJECT_NONE: break;
	}
	return NULL;
}

void vnfs_hook_fallback_config(const struct vnfs_hook *hook, bool before_idmaps,
			       struct vnfs_hook_config *config)
{
	unsigned int shift = hook->fallback_idmap_first && before_idmaps ? 1 : 0;

	config->operation = hook->operation;
	config->flags = hook->flags;
	if (hook->fallback_result_32bit)
		config->flags |= VNFS_HOOK_RESULT_32BIT;
	config->object_kind = hook->object_kind;
	config->object_argument = hook->fallback_object_argument - shift;
	config->file_argument = hook->fallback_file_argument;
	config->lookup_flags_argument = hook->fallback_file_argument + 1;
	config->result_kind = hook->fallback_result_kind;
}
