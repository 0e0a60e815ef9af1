/*
 * kprobe_cookies.c — the kprobed functions attached one by one to the two
 * generic kprobe programs (bpf/vnfs.bpf.c's kprobe_cookie_entry and
 * kretprobe_cookie_exit), each link carrying its function's hook slot as
 * its BPF cookie, where the kernel has cookies on kprobe links (5.15) but
 * cannot attach the functions at once (kprobe_multi.c): Debian's 6.1, built
 * without fprobe.
 *
 * Why: the slots' own programs (kprobe_N, kretprobe_N) are verified one by
 * one, each with its configuration known, and the 28 pairs were most of a
 * start's verification; the two generic programs are verified once.  Each
 * call costs more (the programs decide per call what a slot's programs had
 * decided at load), which is why mode auto keeps fentry; a node that asks
 * for kprobes asks for the quick start (docs/PERFORMANCE.md, "2026-12-06,
 * night: the kprobe path's generic programs on 6.1": 6.6-8.0 % more per
 * call, probes ready in about 1.0 s instead of 1.6).
 *
 * Where the kernel refuses the generic programs, the functions go back to
 * the slots' own programs, in another round (probes.c).  The links are the
 * functions' own, pinned and taken over as the slots' programs' are
 * (pins.c): the cookie travels with the link.
 */
#include "helper/kernel/probes_state.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <string.h>

#include "lib/log.h"
#include "bpf/vnfs.skel.h"

/* A kernel with cookies on perf links has the perf link's type in its BTF
 * (both 5.15); one without refuses the programs only once they are loaded,
 * a round too late. */
bool kprobe_cookies_possible(const struct vnfs_probes *probes)
{
	return !probes->legacy_kernel && probes->kernel_btf.vmlinux &&
	       btf__find_by_name_kind(probes->kernel_btf.vmlinux, "bpf_perf_link",
				      BTF_KIND_STRUCT) > 0;
}

/* Whether this round's kprobed functions take the generic programs. */
bool kprobe_cookies_used(const struct vnfs_probes *probes)
{
	return probes->kprobe_cookies && !probes->kprobe_multi;
}

void kprobe_cookies_prepare(struct vnfs_probes *probes, bool kprobes_planned)
{
	bool wanted = kprobes_planned && kprobe_cookies_used(probes);

	bpf_program__set_autoload(probes->skeleton->progs.kprobe_cookie_entry, wanted);
	bpf_program__set_autoload(probes->skeleton->progs.kretprobe_cookie_exit, wanted);
}

/* The refused program is one of the two (or one libbpf did not name, with
 * the two in the load): the functions go back to the slots' own programs.
 * Returns false for any other name. */
bool kprobe_cookies_refused(struct vnfs_probes *probes, const char *program, int result)
{
	if (!kprobe_cookies_used(probes) ||
	    !bpf_program__autoload(probes->skeleton->progs.kprobe_cookie_entry) ||
	    (program[0] && strcmp(program, "kprobe_cookie_entry") != 0 &&
	     strcmp(program, "kretprobe_cookie_exit") != 0))
		return false;
	vnfs_warning("the kernel refused %s (%s): each function's own kprobe programs instead",
		     program[0] ? program : "a program libbpf did not name", strerror(-result));
	probes->kprobe_cookies = false;
	return true;
}
