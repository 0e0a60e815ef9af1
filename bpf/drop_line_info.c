/*
 * drop_line_info.c — a build step: rewrites a BPF object's .BTF.ext section
 * (dumped to a file by llvm-objcopy) without its line info.
 *
 *   bpf/drop_line_info IN OUT
 *
 * .BTF.ext holds three subsections after its header: func info (which
 * function each program and subprogram is, needed to load them), line info
 * (which source line each instruction came from) and the CO-RE relocations
 * (needed to load on any kernel).  The line info is 89 % of it in vnfs's
 * object (0.40 of 0.46 MB), and libbpf keeps a copy of it, and of each
 * program's share of it, on the helper's heap for the helper's whole life:
 * 0.75 MiB resident of its 10 MiB (docs/PERFORMANCE.md).  The kernel
 * checks it at every load, and uses it for one thing: the source lines in
 * the verifier's log of a rejected program.  A developer who wants them
 * builds with `make VNFS_BPF_LINE_INFO=keep` (bpf/local.am).
 *
 * The header's layout is libbpf's struct btf_ext_header; one with fields
 * this does not know (a longer header) is refused rather than guessed at.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BTF_EXT_MAGIC 0xeB9F

/* struct btf_ext_header of libbpf (tools/lib/bpf/libbpf_internal.h): the
 * offsets are from the end of the header. */
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

/* The whole of path into *data; returns its length, or -1 (reported). */
static long read_whole(const char *path, unsigned char **data)
{
	FILE *file = fopen(path, "rb");
	long length = -1;

	*data = NULL;
	if (file == NULL) {
		fprintf(stderr, "drop_line_info: cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (fseek(file, 0, SEEK_END) == 0 && (length = ftell(file)) >= 0 &&
	    fseek(file, 0, SEEK_SET) == 0 && (*data = malloc(length > 0 ? length : 1)) != NULL &&
	    fread(*data, 1, length, file) == (size_t)length) {
		fclose(file);
		return length;
	}
	fprintf(stderr, "drop_line_info: cannot read %s\n", path);
	free(*data);
	*data = NULL;
	fclose(file);
	return -1;
}

/* Whether [offset, offset + length) lies within the body. */
static int within(uint32_t offset, uint32_t length, uint64_t body_length)
{
	return (uint64_t)offset + length <= body_length;
}

int main(int argc, char **argv)
{
	struct btf_ext_header header;
	unsigned char *data;
	long length;
	FILE *out;
	int status = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: drop_line_info IN OUT (a .BTF.ext section)\n");
		return 2;
	}
	length = read_whole(argv[1], &data);
	if (length < 0)
		return 1;
	if ((size_t)length < sizeof(header)) {
		fprintf(stderr, "drop_line_info: %s: %ld bytes, shorter than a header\n", argv[1],
			length);
		goto out;
	}
	memcpy(&header, data, sizeof(header));
	if (header.magic != BTF_EXT_MAGIC || header.header_length != sizeof(header)) {
		fprintf(stderr, "drop_line_info: %s: not a .BTF.ext of the layout known here "
			"(magic 0x%x, header %u bytes)\n", argv[1], header.magic,
			header.header_length);
		goto out;
	}
	uint64_t body_length = (uint64_t)length - sizeof(header);
	const unsigned char *body = data + sizeof(header);
	if (!within(header.func_info_offset, header.func_info_length, body_length) ||
	    !within(header.line_info_offset, header.line_info_length, body_length) ||
	    !within(header.core_relocation_offset, header.core_relocation_length, body_length) ||
	    header.func_info_length % 4 != 0) {
		fprintf(stderr, "drop_line_info: %s: a subsection lies outside the section\n",
			argv[1]);
		goto out;
	}
	/* Func info first, then the relocations right after it (records are
	 * of 32-bit words, so that stays aligned); no line info. */
	struct btf_ext_header rewritten = header;
	rewritten.func_info_offset = 0;
	rewritten.line_info_offset = header.func_info_length;
	rewritten.line_info_length = 0;
	rewritten.core_relocation_offset = header.func_info_length;
	out = fopen(argv[2], "wb");
	if (out == NULL) {
		fprintf(stderr, "drop_line_info: cannot create %s: %s\n", argv[2], strerror(errno));
		goto out;
	}
	if (fwrite(&rewritten, sizeof(rewritten), 1, out) != 1 ||
	    fwrite(body + header.func_info_offset, 1, header.func_info_length, out) !=
		    header.func_info_length ||
	    fwrite(body + header.core_relocation_offset, 1, header.core_relocation_length, out) !=
		    header.core_relocation_length)
		fprintf(stderr, "drop_line_info: cannot write %s\n", argv[2]);
	else
		status = 0;
	if (fclose(out) != 0) {
		fprintf(stderr, "drop_line_info: cannot write %s: %s\n", argv[2], strerror(errno));
		status = 1;
	}
out:
	free(data);
	return status;
}
