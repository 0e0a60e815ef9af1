/*
 * btf_ext_format.h — the layout of a BPF object's .BTF.ext section, for the
 * build steps that read it (bpf/drop_line_info.c, bpf/core_type_names.c).
 *
 * It is libbpf's (tools/lib/bpf/libbpf_internal.h, struct btf_ext_header
 * and struct bpf_core_relo; the relocation kinds are enum bpf_core_relo_kind
 * of <linux/bpf.h>).  A header longer than this one has fields these tools
 * do not know: they refuse it rather than guess.
 */
#ifndef VNFS_BTF_EXT_FORMAT_H
#define VNFS_BTF_EXT_FORMAT_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BTF_EXT_MAGIC 0xeB9F

/* The offsets are from the end of the header. */
struct btf_ext_header {
	uint16_t magic;
	uint8_t version;
	uint8_t flags;
	uint32_t header_length;
	uint32_t func_info_offset;
	uint32_t func_info_length;
	uint32_t line_info_offset;
	uint32_t line_info_length;
	uint32_t core_relocation_offset;
	uint32_t core_relocation_length;
};

/* The CO-RE relocations subsection: a uint32_t record size, then for each
 * program section its name (an offset in .BTF's strings), its record count
 * and the records. */
struct btf_ext_section_info {
	uint32_t section_name_offset;
	uint32_t record_count;
};

struct btf_ext_core_relocation {
	uint32_t instruction_offset;
	uint32_t type_id; /* the relocation's root type, in .BTF */
	uint32_t access_string_offset;
	uint32_t kind;    /* enum bpf_core_relo_kind */
};

/* Whether [offset, offset + length) lies within a body of body_length. */
static inline int btf_ext_within(uint32_t offset, uint32_t length, uint64_t body_length)
{
	return (uint64_t)offset + length <= body_length;
}

/*
 * Reads a .BTF.ext section dumped to path (llvm-objcopy --dump-section)
 * into *data, its header into *header.  Returns the length of the body
 * after the header, every subsection checked to lie within it, or -1 with
 * the reason on stderr, after tool's name.
 */
static inline long btf_ext_read(const char *tool, const char *path, unsigned char **data,
				struct btf_ext_header *header)
{
	FILE *file = fopen(path, "rb");
	long length = -1;

	*data = NULL;
	if (file == NULL) {
		fprintf(stderr, "%s: cannot open %s: %s\n", tool, path, strerror(errno));
		return -1;
	}
	if (fseek(file, 0, SEEK_END) != 0 || (length = ftell(file)) < 0 ||
	    fseek(file, 0, SEEK_SET) != 0 || (*data = malloc(length > 0 ? length : 1)) == NULL ||
	    fread(*data, 1, length, file) != (size_t)length) {
		fprintf(stderr, "%s: cannot read %s\n", tool, path);
		length = -1;
	} else if ((size_t)length < sizeof(*header)) {
		fprintf(stderr, "%s: %s: %ld bytes, shorter than a header\n", tool, path, length);
		length = -1;
	} else {
		memcpy(header, *data, sizeof(*header));
		length -= sizeof(*header);
		if (header->magic != BTF_EXT_MAGIC || header->header_length != sizeof(*header)) {
			fprintf(stderr, "%s: %s: not a .BTF.ext of the layout known here "
				"(magic 0x%x, header %u bytes)\n", tool, path, header->magic,
				header->header_length);
			length = -1;
		} else if (!btf_ext_within(header->func_info_offset, header->func_info_length, length) ||
			   !btf_ext_within(header->line_info_offset, header->line_info_length, length) ||
			   !btf_ext_within(header->core_relocation_offset,
					   header->core_relocation_length, length)) {
			fprintf(stderr, "%s: %s: a subsection lies outside the section\n", tool, path);
			length = -1;
		}
	}
	fclose(file);
	if (length < 0) {
		free(*data);
		*data = NULL;
	}
	return length;
}

#endif /* VNFS_BTF_EXT_FORMAT_H */
