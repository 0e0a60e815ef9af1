/*
 * operations.h — the one list of NFS client operations vnfs accounts for.
 *
 * Everything that names or numbers an operation derives from this list: the
 * enum shared with the BPF programs, the names in metrics, SQL columns, JSON
 * keys and report headers, and the metadata/data classification the report's
 * findings use.  Add an operation here and every output gains it.
 *
 * X(ENUM_SUFFIX, name, class)
 *   name   lower-case, [a-z_]: used verbatim as a Prometheus label value,
 *          a JSON key and an SQL value.
 *   class  DATA for operations that move file contents, META for the rest.
 *
 * mmap_read is not a system call: it counts the bytes the client brings into
 * the page cache from the server inside the job's own task but outside read()
 * (page faults on memory-mapped files, splice), so they are never counted
 * twice with read().
 *
 * This header is included by BPF C and by user space: plain macros only.
 */
#ifndef VNFS_OPERATIONS_H
#define VNFS_OPERATIONS_H

#define VNFS_OPERATIONS(X)            \
	X(READ, read, DATA)           \
	X(WRITE, write, DATA)         \
	X(MMAP_READ, mmap_read, DATA) \
	X(OPEN, open, META)           \
	X(CLOSE, close, META)         \
	X(FLUSH, flush, META)         \
	X(FSYNC, fsync, DATA)         \
	X(MMAP, mmap, META)           \
	X(LOCK, lock, META)           \
	X(GETATTR, getattr, META)     \
	X(SETATTR, setattr, META)     \
	X(LOOKUP, lookup, META)       \
	X(ACCESS, access, META)       \
	X(CREATE, create, META)       \
	X(LINK, link, META)           \
	X(UNLINK, unlink, META)       \
	X(SYMLINK, symlink, META)     \
	X(MKDIR, mkdir, META)         \
	X(RMDIR, rmdir, META)         \
	X(RENAME, rename, META)       \
	X(READDIR, readdir, META)     \
	X(LISTXATTR, listxattr, META)

enum vnfs_operation {
#define VNFS_OPERATION_ENUM(suffix, name, class) VNFS_OP_##suffix,
	VNFS_OPERATIONS(VNFS_OPERATION_ENUM)
#undef VNFS_OPERATION_ENUM
	VNFS_OP_COUNT
};

#endif /* VNFS_OPERATIONS_H */
