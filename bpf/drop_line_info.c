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
 * The layout is bpf/btf_ext_format.h's.
 */
#include "bpf/btf_ext_format.h"

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
	length = btf_ext_read("drop_line_info", argv[1], &data, &header);
	if (length < 0)
		return 1;
	const unsigned char *body = data + sizeof(header);
	if (header.func_info_length % 4 != 0) {
		fprintf(stderr, "drop_line_info: %s: func info of %u bytes\n", argv[1],
			header.func_info_length);
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
