// SPDX-License-Identifier: GPL-2.0
/*
 * Branch Trace Store records the right branches.
 *
 * Runs small code sequences with a label on every branch and compares the
 * branch records perf delivers with the pairs the labels predict, for each
 * branch kind the SDM says BTS records (taken jcc, direct and indirect
 * jmp and call, ret, loop and jrcxz, far call and far return, syscall,
 * int3 and ud2 with the return through sigreturn), and checks that
 * not-taken branches and string repeats leave no record.
 *
 * Both ways perf reads BTS are tested: the BTS fixed counter
 * (PERF_COUNT_HW_BRANCH_INSTRUCTIONS with sample_period 1; each branch a
 * sample with PERF_SAMPLE_IP and PERF_SAMPLE_ADDR) and the intel_bts PMU
 * (raw records in the AUX area; absent when page table isolation is on).
 * Written for hardware and for an emulator that models BTS after the SDM;
 * without BTS each case says SKIP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <ucontext.h>

#include "../kselftest.h"

/* the code sequences: one region per case, a label on every branch */
asm (".pushsection .text, \"ax\"\n"
	/* jcc: a not-taken jnz, a taken jz */
	"bts_jcc_start:\n"
	"	xor %eax, %eax\n"
	"bts_jcc_nt:\n"
	"	jnz bts_jcc_bad\n"
	"bts_jcc_t:\n"
	"	jz bts_jcc_tgt\n"
	"bts_jcc_bad:\n"
	"	ud2\n"
	"bts_jcc_tgt:\n"
	"	ret\n"
	"bts_jcc_end:\n"
	/* jmp: direct, then indirect through a register */
	"bts_jmp_start:\n"
	"bts_jmp_d:\n"
	"	jmp bts_jmp_t1\n"
	"	ud2\n"
	"bts_jmp_t1:\n"
	"	lea bts_jmp_t2(%rip), %rax\n"
	"bts_jmp_i:\n"
	"	jmp *%rax\n"
	"	ud2\n"
	"bts_jmp_t2:\n"
	"	ret\n"
	"bts_jmp_end:\n"
	/* call/ret: direct, then indirect */
	"bts_call_start:\n"
	"bts_call_d:\n"
	"	call bts_call_f\n"
	"bts_call_d_back:\n"
	"	lea bts_call_f(%rip), %rax\n"
	"bts_call_i:\n"
	"	call *%rax\n"
	"bts_call_i_back:\n"
	"	ret\n"
	"bts_call_f:\n"
	"	ret\n"
	"bts_call_end:\n"
	/* loop taken twice then not, jrcxz taken */
	"bts_loop_start:\n"
	"	mov $3, %ecx\n"
	"bts_loop_l:\n"
	"	loop bts_loop_l\n"
	"bts_loop_jrcxz:\n"
	"	jrcxz bts_loop_tgt\n"
	"	ud2\n"
	"bts_loop_tgt:\n"
	"	ret\n"
	"bts_loop_end:\n"
	/* string instructions: their repeats are not branches */
	"bts_str_start:\n"
	"	sub $64, %rsp\n"
	"	mov %rsp, %rdi\n"
	"	mov $32, %ecx\n"
	"	xor %eax, %eax\n"
	"	rep stosb\n"
	"	mov %rsp, %rsi\n"
	"	lea 32(%rsp), %rdi\n"
	"	mov $4, %ecx\n"
	"	rep movsq\n"
	"	add $64, %rsp\n"
	"bts_str_ret:\n"
	"	ret\n"
	"bts_str_end:\n"
	/* far call through m16:64 to the same 64-bit code segment, lretq */
	"bts_far_start:\n"
	"	sub $16, %rsp\n"
	"	lea bts_far_tgt(%rip), %rax\n"
	"	mov %rax, (%rsp)\n"
	"	mov %cs, %eax\n"
	"	mov %ax, 8(%rsp)\n"
	"bts_far_call:\n"
	"	rex64 lcall *(%rsp)\n"
	"bts_far_back:\n"
	"	add $16, %rsp\n"
	"bts_far_ret:\n"
	"	ret\n"
	"bts_far_tgt:\n"
	"	lretq\n"
	"bts_far_end:\n"
	/* 20000 taken jnz: BTS buffers fill, the PMI drains them */
	"bts_many_start:\n"
	"	mov $20000, %ecx\n"
	"bts_many_top:\n"
	"	dec %ecx\n"
	"bts_many_jnz:\n"
	"	jnz bts_many_top\n"
	"bts_many_ret:\n"
	"	ret\n"
	"bts_many_end:\n"
	/* syscall (getppid) and the return from the kernel */
	"bts_sys_start:\n"
	"	mov $110, %eax\n"
	"bts_sys_insn:\n"
	"	syscall\n"
	"bts_sys_back:\n"
	"	ret\n"
	"bts_sys_end:\n"
	/* int3: #BP, SIGTRAP, back through sigreturn */
	"bts_int3_start:\n"
	"bts_int3_insn:\n"
	"	int3\n"
	"bts_int3_back:\n"
	"	ret\n"
	"bts_int3_end:\n"
	/* ud2: #UD, SIGILL, the handler skips it */
	"bts_ud2_start:\n"
	"bts_ud2_insn:\n"
	"	ud2\n"
	"bts_ud2_back:\n"
	"	ret\n"
	"bts_ud2_end:\n"
	/* for PTRACE_SINGLEBLOCK (DEBUGCTL.BTF): a stop after each branch */
	"bts_btf_start:\n"
	"	int3\n"
	"bts_btf_go:\n"
	"	xor %eax, %eax\n"
	"	jnz bts_btf_bad\n"
	"	jmp bts_btf_t1\n"
	"bts_btf_bad:\n"
	"	ud2\n"
	"bts_btf_t1:\n"
	"	lea bts_btf_t2(%rip), %rax\n"
	"	nop\n"
	"	call *%rax\n"
	"bts_btf_back:\n"
	"	ret\n"
	"bts_btf_t2:\n"
	"	ret\n"
	"bts_btf_end:\n"
	".popsection\n");

#define LABEL(x) extern const char x[]
LABEL(bts_jcc_start); LABEL(bts_jcc_t); LABEL(bts_jcc_tgt); LABEL(bts_jcc_end);
LABEL(bts_jmp_start); LABEL(bts_jmp_d); LABEL(bts_jmp_t1); LABEL(bts_jmp_i);
LABEL(bts_jmp_t2); LABEL(bts_jmp_end);
LABEL(bts_call_start); LABEL(bts_call_d); LABEL(bts_call_d_back);
LABEL(bts_call_i); LABEL(bts_call_i_back); LABEL(bts_call_f);
LABEL(bts_call_end);
LABEL(bts_loop_start); LABEL(bts_loop_l); LABEL(bts_loop_jrcxz);
LABEL(bts_loop_tgt); LABEL(bts_loop_end);
LABEL(bts_str_start); LABEL(bts_str_ret); LABEL(bts_str_end);
LABEL(bts_far_start); LABEL(bts_far_call); LABEL(bts_far_back);
LABEL(bts_far_ret); LABEL(bts_far_tgt); LABEL(bts_far_end);
LABEL(bts_many_start); LABEL(bts_many_top); LABEL(bts_many_jnz);
LABEL(bts_many_ret); LABEL(bts_many_end);
LABEL(bts_sys_start); LABEL(bts_sys_insn); LABEL(bts_sys_back);
LABEL(bts_sys_end);
LABEL(bts_int3_start); LABEL(bts_int3_insn); LABEL(bts_int3_back);
LABEL(bts_int3_end);
LABEL(bts_ud2_start); LABEL(bts_ud2_insn); LABEL(bts_ud2_back);
LABEL(bts_ud2_end);
LABEL(bts_btf_start); LABEL(bts_btf_go); LABEL(bts_btf_t1);
LABEL(bts_btf_back); LABEL(bts_btf_t2); LABEL(bts_btf_end);

/* wildcards in expected pairs */
#define KERNEL	((const char *)1)	/* any kernel address */
#define CALLER	((const char *)2)	/* the C caller of the region */

struct bts_pair {
	const char *from;
	const char *to;
	int count;		/* times in a row; 0 means once */
};

#define MAX_PAIRS 8

struct bts_case {
	const char *name;
	const char *start;
	const char *end;
	bool kernel;		/* crosses into the kernel: trace CPL 0 too */
	struct bts_pair expect[MAX_PAIRS];
};

static const struct bts_case cases[] = {
	{ "jcc", bts_jcc_start, bts_jcc_end, false, {
		{ bts_jcc_t, bts_jcc_tgt }, { bts_jcc_tgt, CALLER } } },
	{ "jmp", bts_jmp_start, bts_jmp_end, false, {
		{ bts_jmp_d, bts_jmp_t1 }, { bts_jmp_i, bts_jmp_t2 },
		{ bts_jmp_t2, CALLER } } },
	{ "call_ret", bts_call_start, bts_call_end, false, {
		{ bts_call_d, bts_call_f }, { bts_call_f, bts_call_d_back },
		{ bts_call_i, bts_call_f }, { bts_call_f, bts_call_i_back },
		{ bts_call_i_back, CALLER } } },
	{ "loop_jrcxz", bts_loop_start, bts_loop_end, false, {
		{ bts_loop_l, bts_loop_l, 2 },
		{ bts_loop_jrcxz, bts_loop_tgt }, { bts_loop_tgt, CALLER } } },
	{ "string_repeat", bts_str_start, bts_str_end, false, {
		{ bts_str_ret, CALLER } } },
	{ "far_call_ret", bts_far_start, bts_far_end, false, {
		{ bts_far_call, bts_far_tgt }, { bts_far_tgt, bts_far_back },
		{ bts_far_ret, CALLER } } },
	{ "many_branches", bts_many_start, bts_many_end, false, {
		{ bts_many_jnz, bts_many_top, 19999 },
		{ bts_many_ret, CALLER } } },
	{ "syscall_sysret", bts_sys_start, bts_sys_end, true, {
		{ bts_sys_insn, KERNEL }, { KERNEL, bts_sys_back },
		{ bts_sys_back, CALLER } } },
	{ "int3_sigreturn", bts_int3_start, bts_int3_end, true, {
		{ bts_int3_insn, KERNEL }, { KERNEL, bts_int3_back },
		{ bts_int3_back, CALLER } } },
	{ "ud2_sigreturn", bts_ud2_start, bts_ud2_end, true, {
		{ bts_ud2_insn, KERNEL }, { KERNEL, bts_ud2_back },
		{ bts_ud2_back, CALLER } } },
};

struct bts_rec {
	uint64_t from;
	uint64_t to;
	int count;		/* after merging repeats */
};

#define MAX_RECS 32768

static bool is_kernel(uint64_t addr)
{
	return addr >= 0xffff800000000000ULL;
}

static bool in_case(const struct bts_case *c, uint64_t addr)
{
	return addr >= (uintptr_t)c->start && addr < (uintptr_t)c->end;
}

/* Collect a record touching the case's code; the others are not ours. */
static void collect(const struct bts_case *c, struct bts_rec *recs, int *n,
		    int max, uint64_t from, uint64_t to)
{
	if (!in_case(c, from) && !in_case(c, to))
		return;
	if (*n < max) {
		recs[*n].from = from;
		recs[*n].to = to;
		recs[*n].count = 1;
	}
	(*n)++;
}

static void run_case(const struct bts_case *c)
{
	/* below the red zone: the callee's return address is pushed there */
	asm volatile ("sub $128, %%rsp\n\t"
		      "call *%0\n\t"
		      "add $128, %%rsp"
		      : : "r" (c->start)
		      : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10",
			"r11", "memory", "cc");
}

static void sig_handler(int sig, siginfo_t *info, void *ctx_void)
{
	ucontext_t *ctx = ctx_void;

	if (sig == SIGILL)
		ctx->uc_mcontext.gregs[REG_RIP] += 2;	/* ud2 */
}

static bool drop[MAX_RECS];

/*
 * Keep the records of the case: those leaving its code, and those coming
 * back into it from the kernel.  An interrupt leaves a pair from the
 * interrupted instruction into the kernel and back to it: drop those.
 * With @user_only (the kernel was not traced), a record with a kernel end
 * can only be half such a pair: which half BTS_OFF_OS keeps at the
 * crossing (the entry, the return, or both) is the CPU's choice, which
 * the SDM does not state; drop them all.  Merge the same branch taken
 * several times in a row into one record.
 */
static int filter(const struct bts_case *c, bool user_only,
		  const struct bts_rec *in, int n, struct bts_rec *out, int max)
{
	int i, j, k = 0;

	memset(drop, 0, sizeof(drop));
	for (i = 0; i < n; i++) {
		if (user_only && (is_kernel(in[i].from) || is_kernel(in[i].to))) {
			drop[i] = true;
			continue;
		}
		if (!in_case(c, in[i].from) || !is_kernel(in[i].to))
			continue;
		for (j = i + 1; j < n; j++) {
			if (is_kernel(in[j].from) && in[j].to == in[i].from) {
				drop[i] = true;
				drop[j] = true;
				break;
			}
		}
	}
	for (i = 0; i < n; i++) {
		if (drop[i])
			continue;
		if (!in_case(c, in[i].from) &&
		    !(is_kernel(in[i].from) && in_case(c, in[i].to)))
			continue;
		if (k && out[k - 1].from == in[i].from &&
		    out[k - 1].to == in[i].to) {
			out[k - 1].count++;
			continue;
		}
		if (k == max)
			return -1;
		out[k++] = in[i];
	}
	return k;
}

static bool match_addr(const struct bts_case *c, const char *want,
		       uint64_t got)
{
	if (want == KERNEL)
		return is_kernel(got);
	if (want == CALLER)
		return !is_kernel(got) && !in_case(c, got);
	return got == (uintptr_t)want;
}

static void print_addr(const struct bts_case *c, uint64_t addr)
{
	if (in_case(c, addr))
		printf(" %s+%#lx", c->name,
		       (unsigned long)(addr - (uintptr_t)c->start));
	else
		printf(" %s", is_kernel(addr) ? "kernel" : "outside");
}

/*
 * Compare; print the records on a mismatch.  Without @kernel, the pairs
 * with a kernel end are not expected (perf filters them out).
 * Return: true on a match.
 */
static bool check(const struct bts_case *c, bool kernel,
		  const struct bts_rec *got, int n)
{
	struct bts_pair exp[MAX_PAIRS];
	int i, want = 0;
	bool ok;

	for (i = 0; i < MAX_PAIRS && c->expect[i].from; i++)
		if (kernel || (c->expect[i].from != KERNEL &&
			       c->expect[i].to != KERNEL))
			exp[want++] = c->expect[i];
	ok = n == want;
	for (i = 0; ok && i < n; i++)
		ok = match_addr(c, exp[i].from, got[i].from) &&
		     match_addr(c, exp[i].to, got[i].to) &&
		     got[i].count == (exp[i].count ?: 1);
	if (ok)
		return true;
	printf("# %s: %d records, expected %d\n", c->name, n, want);
	for (i = 0; i < n; i++) {
		printf("#   got ");
		print_addr(c, got[i].from);
		printf(" ->");
		print_addr(c, got[i].to);
		printf(" x%d\n", got[i].count);
	}
	return false;
}

static long perf_open(struct perf_event_attr *attr)
{
	return syscall(__NR_perf_event_open, attr, 0, -1, -1, 0);
}

#define DATA_PAGES	256	/* room for the kernel's branches too */
#define AUX_PAGES	256

/*
 * The BTS fixed counter: every branch comes as a sample {ip, addr}.
 * Return: number of records, or -errno.
 */
static int trace_fixed(const struct bts_case *c, struct bts_rec *recs,
		       int max)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_HARDWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_ADDR,
		/* the BTS counter is user-only; perf drops kernel addresses */
		.exclude_kernel = 1,
		.exclude_hv = 1,
		.disabled = 1,
	};
	long page = sysconf(_SC_PAGESIZE);
	size_t len = (1 + DATA_PAGES) * page;
	struct perf_event_mmap_page *pc;
	uint64_t head, pos;
	int fd, n = 0;
	char *data;

	fd = perf_open(&attr);
	if (fd < 0)
		return -errno;
	pc = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pc == MAP_FAILED) {
		n = -errno;
		close(fd);
		return n;
	}
	data = (char *)pc + page;

	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	run_case(c);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);

	head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	for (pos = pc->data_tail; pos < head; ) {
		struct perf_event_header hdr;
		uint64_t body[2];
		size_t off = pos % (DATA_PAGES * page);

		memcpy(&hdr, data + off, sizeof(hdr));
		if (hdr.type == PERF_RECORD_LOST) {
			n = -ENOSPC;
			break;
		}
		if (hdr.type == PERF_RECORD_SAMPLE) {
			for (int i = 0; i < 2; i++) {
				size_t o = (off + sizeof(hdr) + 8 * i) %
					   (DATA_PAGES * page);

				memcpy(&body[i], data + o, 8);
			}
			collect(c, recs, &n, max, body[0], body[1]);
		}
		pos += hdr.size;
	}
	munmap(pc, len);
	close(fd);
	return n;
}

/* Return: true if /proc/cpuinfo lists the bts flag (X86_FEATURE_BTS). */
static bool cpu_has_bts(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (!strncmp(line, "flags", 5) && (strstr(line, " bts ") || strstr(line, " bts\n")))
			found = true;
	fclose(f);
	return found;
}

/* The intel_bts PMU's type, or -1 if there is none. */
static int intel_bts_type(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/intel_bts/type", "r");
	int type = -1;

	if (f) {
		if (fscanf(f, "%d", &type) != 1)
			type = -1;
		fclose(f);
	}
	return type;
}

/*
 * The intel_bts PMU: raw BTS records {from, to, flags} in the AUX area.
 * Return: number of records, or -errno.
 */
static int trace_intel_bts(const struct bts_case *c, int type,
			   struct bts_rec *recs, int max)
{
	struct perf_event_attr attr = {
		.type = type,
		.size = sizeof(attr),
		.exclude_kernel = !c->kernel,
		.exclude_hv = 1,
		.disabled = 1,
	};
	long page = sysconf(_SC_PAGESIZE);
	size_t len = 2 * page, aux_len = AUX_PAGES * page;
	struct perf_event_mmap_page *pc;
	uint64_t head, pos;
	int fd, n = 0;
	char *aux;

	fd = perf_open(&attr);
	if (fd < 0)
		return -errno;
	pc = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pc == MAP_FAILED)
		goto fail_close;
	pc->aux_offset = len;
	pc->aux_size = aux_len;
	aux = mmap(NULL, aux_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, len);
	if (aux == MAP_FAILED)
		goto fail_unmap;

	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	run_case(c);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);

	head = __atomic_load_n(&pc->aux_head, __ATOMIC_ACQUIRE);
	if (head > aux_len) {
		n = -ENOSPC;
		head = 0;
	}
	for (pos = pc->aux_tail; pos + 24 <= head; pos += 24) {
		uint64_t rec[3];

		memcpy(rec, aux + pos, sizeof(rec));
		/* BTS_OFF_OS: no branch may start and end in the kernel */
		if (attr.exclude_kernel && is_kernel(rec[0]) &&
		    is_kernel(rec[1])) {
			n = -EPROTO;
			break;
		}
		collect(c, recs, &n, max, rec[0], rec[1]);
	}
	munmap(aux, aux_len);
	munmap(pc, len);
	close(fd);
	return n;

fail_unmap:
	n = -errno;
	munmap(pc, len);
	close(fd);
	return n;
fail_close:
	n = -errno;
	close(fd);
	return n;
}

static void test_case(const struct bts_case *c, bool aux, int type)
{
	const char *how = aux ? "intel_bts" : "bts_fixed";
	static struct bts_rec all[MAX_RECS], mine[MAX_RECS];
	int n, k, tries;

	for (tries = 0; tries < 3; tries++) {
		run_case(c);	/* fault in pages, warm up */
		if (aux)
			n = trace_intel_bts(c, type, all, MAX_RECS);
		else
			n = trace_fixed(c, all, MAX_RECS);
		if (n == -ENOSPC)
			continue;	/* lost records: try again */
		break;
	}
	if (n < 0) {
		ksft_print_msg("%s %s: tracing failed: %s\n", how, c->name,
			       strerror(-n));
		ksft_test_result_fail("%s %s\n", how, c->name);
		return;
	}
	k = n > MAX_RECS ? -1 : filter(c, !aux || !c->kernel, all, n, mine,
					MAX_RECS);
	if (k < 0) {
		ksft_print_msg("%s %s: too many records\n", how, c->name);
		ksft_test_result_fail("%s %s\n", how, c->name);
		return;
	}
	ksft_test_result(check(c, aux, mine, k), "%s %s\n", how, c->name);
}

/* A SKIP line that names its case: "ok N HOW CASE # SKIP REASON" */
static void skip_case(const char *how, const char *name, const char *reason)
{
	char full[64];

	snprintf(full, sizeof(full), "%s %s", how, name);
	ksft_test_result_code(KSFT_SKIP, full, "%s\n", reason);
}

static const struct bts_case btf_case = {
	"ptrace_singleblock", bts_btf_start, bts_btf_end, false, {
		{ NULL, bts_btf_t1 }, { NULL, bts_btf_t2 },
		{ NULL, bts_btf_back }, { NULL, CALLER } } };

/*
 * PTRACE_SINGLEBLOCK sets EFLAGS.TF and DEBUGCTL.BTF: the child stops
 * after each taken branch only, at its target; not after the other
 * instructions nor after the not-taken jnz.
 */
static void test_singleblock(void)
{
	const struct bts_case *c = &btf_case;
	unsigned long rip[MAX_PAIRS];
	int status, i, n = 0;
	bool ok = true;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (!pid) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		run_case(c);
		_exit(0);
	}
	waitpid(pid, &status, 0);		/* SIGSTOP */
	ptrace(PTRACE_CONT, pid, NULL, NULL);
	waitpid(pid, &status, 0);		/* the int3 */
	while (n < MAX_PAIRS) {
		if (ptrace(PTRACE_SINGLEBLOCK, pid, NULL, NULL)) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			ksft_test_result_code(KSFT_SKIP, c->name,
					      "PTRACE_SINGLEBLOCK: %s\n",
					      strerror(errno));
			return;
		}
		waitpid(pid, &status, 0);
		if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP)
			break;
		rip[n] = ptrace(PTRACE_PEEKUSER, pid,
				offsetof(struct user_regs_struct, rip), NULL);
		if (!in_case(c, rip[n++]))
			break;
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);

	for (i = 0; i < MAX_PAIRS && c->expect[i].to; i++)
		ok &= i < n && match_addr(c, c->expect[i].to, rip[i]);
	ok &= n == i;
	if (!ok) {
		printf("# %s: %d stops, expected %d\n", c->name, n, i);
		for (i = 0; i < n; i++) {
			printf("#   stop at");
			print_addr(c, rip[i]);
			printf("\n");
		}
	}
	ksft_test_result(ok, "%s\n", c->name);
}

/**
 * main() - Run every case through the BTS counter and through intel_bts.
 *
 * Return: the kselftest exit status (KSFT_PASS, KSFT_FAIL or KSFT_SKIP).
 */
int main(void)
{
	struct perf_event_attr probe = {
		.type = PERF_TYPE_HARDWARE,
		.size = sizeof(probe),
		.config = PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
		.sample_period = 1,
		.exclude_kernel = 1,
		.disabled = 1,
	};
	struct sigaction sa = {
		.sa_sigaction = sig_handler,
		.sa_flags = SA_SIGINFO,
	};
	int ncases = ARRAY_SIZE(cases);
	const char *fixed_skip = NULL;
	int i, fd, type;

	ksft_print_header();
	ksft_set_plan(2 * ncases + 1);

	sigaction(SIGTRAP, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);

	/*
	 * Without the CPU feature, the same attributes sample the branch
	 * counter (or fail): say SKIP, not FAIL.
	 */
	fd = cpu_has_bts() ? perf_open(&probe) : -1;
	if (!cpu_has_bts())
		fixed_skip = "the CPU has no BTS (no bts in /proc/cpuinfo)";
	else if (fd < 0)
		fixed_skip = strerror(errno);
	else
		close(fd);
	type = intel_bts_type();

	for (i = 0; i < ncases; i++) {
		if (fixed_skip)
			skip_case("bts_fixed", cases[i].name, fixed_skip);
		else
			test_case(&cases[i], false, 0);
	}
	for (i = 0; i < ncases; i++) {
		if (type < 0)
			skip_case("intel_bts", cases[i].name,
				  "no intel_bts PMU (no BTS, or PTI on: boot with pti=off)");
		else
			test_case(&cases[i], true, type);
	}
	test_singleblock();
	ksft_finished();
}
