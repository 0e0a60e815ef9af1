/*
 * operations.c — the names and classes of the operations, derived from the
 * one list in bpf/operations.h.
 */
#include "lib/record.h"

const char *const vnfs_operation_names[VNFS_OP_COUNT] = {
#define OPERATION_NAME(suffix, name, class) [VNFS_OP_##suffix] = #name,
	VNFS_OPERATIONS(OPERATION_NAME)
#undef OPERATION_NAME
};

const bool vnfs_operation_is_metadata[VNFS_OP_COUNT] = {
#define OPERATION_CLASS(suffix, name, class) [VNFS_OP_##suffix] = VNFS_CLASS_IS_META_##class,
#define VNFS_CLASS_IS_META_META true
#define VNFS_CLASS_IS_META_DATA false
	VNFS_OPERATIONS(OPERATION_CLASS)
#undef OPERATION_CLASS
};
