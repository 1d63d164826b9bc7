// SPDX-License-Identifier: GPL-2.0
/*
 * PTRACE_BTS_* against Documentation/arch/x86/ptrace-bts.rst.
 *
 * Each test checks a promise of that document, written from the document
 * alone: the rules of PTRACE_BTS_CONFIG and PTRACE_BTS_STATUS, DRAIN, the
 * overflow signal and the lifetime of a configuration.  The tests record
 * switches (PTRACE_BTS_O_SCHED), which work on any cpu; a buffer of 8
 * records fills from a few usleep() calls of the tracee, and the tracee
 * stops itself with raise(SIGSTOP), so every test is deterministic.
 * The tests of branches (PTRACE_BTS_O_TRACE) need BTS and are skipped
 * with the reason without it; their tracee runs a loop of 20000 branches
 * at a known address (marker_loop()) between its stops.  The tests of
 * PTRACE_BTS_O_LOSSLESS drain at each overflow stop a tracee that sleeps
 * (switches) or runs a loop of 19999 back edges at global asm labels
 * (bts_doc_loop()), and must get every record.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/perf_event.h>
#include <linux/ptrace.h>
#include <asm/ptrace-bts.h>

#include "../kselftest_harness.h"

#define REC		sizeof(struct bts_struct)
#define NREC(n)		((__u32)((n) * REC))
#define MAX_RECS	256
#define NAPS		6		/* usleep()s that fill 8 records */
#define MARK_UID	4242U		/* si_uid of the tracee's own signals */
#define TEST_UID	42421		/* the unprivileged tracer */

static long forked_pid;	/* the tracer reads it with PTRACE_PEEKDATA */
static void (*tracee_setup)(void);	/* run first by a new tracee */

static long bts_req(int req, pid_t pid, void *addr, unsigned long data)
{
	return syscall(SYS_ptrace, req, pid, addr, data);
}

static long bts_config(pid_t pid, __u32 size, __u32 flags, __u32 sig)
{
	struct ptrace_bts_config cfg = {
		.size = size,
		.flags = flags,
		.signal = sig,
		.bts_size = REC,
	};

	return bts_req(PTRACE_BTS_CONFIG, pid, &cfg, sizeof(cfg));
}

static long bts_status(pid_t pid, struct ptrace_bts_config *st)
{
	memset(st, 0xa5, sizeof(*st));
	return bts_req(PTRACE_BTS_STATUS, pid, st, sizeof(*st));
}

static long bts_size(pid_t pid)
{
	return bts_req(PTRACE_BTS_SIZE, pid, NULL, 0);
}

static long bts_drain(pid_t pid, struct bts_struct *recs, size_t n)
{
	return bts_req(PTRACE_BTS_DRAIN, pid, recs, n * REC);
}

static void naps(int n)
{
	while (n--)
		usleep(1000);
}

/*
 * Fork a tracee that asks to be traced, blocks @block (if not 0), stops
 * and then runs @fn(@arg).  With @deathsig it dies with its tracer.
 * Returns its pid, in the first stop, or -1.
 */
static pid_t start_tracee(void (*fn)(long), long arg, int block, bool deathsig)
{
	sigset_t set;
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		if (tracee_setup)
			tracee_setup();
		if (deathsig)
			prctl(PR_SET_PDEATHSIG, SIGKILL);
		else
			alarm(60);
		if (block) {
			sigemptyset(&set);
			sigaddset(&set, block);
			sigprocmask(SIG_BLOCK, &set, NULL);
		}
		if (bts_req(PTRACE_TRACEME, 0, NULL, 0))
			_exit(90);
		raise(SIGSTOP);
		fn(arg);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status) ||
	    WSTOPSIG(status) != SIGSTOP) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

/* Resume @pid with @sig and wait for its next stop; the wait status. */
static int resume(pid_t pid, int sig)
{
	int status = -1;

	if (bts_req(PTRACE_CONT, pid, NULL, sig))
		return -1;
	if (waitpid(pid, &status, __WALL) != pid)
		return -1;
	return status;
}

/* resume(), passing over the SIGCHLD of a child that died meanwhile. */
static int resume_past_sigchld(pid_t pid)
{
	int status = resume(pid, 0);

	while (WIFSTOPPED(status) && WSTOPSIG(status) == SIGCHLD)
		status = resume(pid, 0);
	return status;
}

static void finish(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, __WALL);
}

/* Tracee bodies: @arg is the number of naps, or a signal and naps. */
static void body_stops(long arg)
{
	for (;;) {
		naps(arg);
		raise(SIGSTOP);
	}
}

static void body_pause(long arg)
{
	(void)arg;
	for (;;)
		pause();
}

static void body_naps_exit(long arg)
{
	naps(arg);
	_exit(0);
}

/* @arg: the signal; exit 1 if it is still pending after the second stop. */
static void body_stale(long arg)
{
	sigset_t set;

	naps(NAPS);
	raise(SIGSTOP);
	sigpending(&set);
	_exit(sigismember(&set, arg) ? 1 : 0);
}

static void queue_self(int sig, bool thread)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_signo = sig;
	si.si_code = SI_KERNEL;
	si.si_pid = getpid();
	si.si_uid = MARK_UID;
	if (thread)
		syscall(SYS_rt_tgsigqueueinfo, getpid(), syscall(SYS_gettid), sig, &si);
	else
		syscall(SYS_rt_sigqueueinfo, getpid(), sig, &si);
}

/* Queue @arg to itself before and after an overflow, look-alikes. */
static void body_self_queue(long arg)
{
	queue_self(arg, true);
	naps(NAPS);
	queue_self(arg, false);
	raise(SIGSTOP);
	body_pause(0);
}

static void body_fork_twice(long arg)
{
	int i;

	(void)arg;

	for (i = 0; i < 2; i++) {
		pid_t child = fork();

		if (!child) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			body_pause(0);
		}
		forked_pid = child;
		raise(SIGSTOP);
	}
	body_pause(0);
}

static void body_exec(long arg)
{
	naps(arg);
	execl("/proc/self/exe", "ptrace_bts_doc", "-l", (char *)NULL);
	_exit(91);
}

struct pending {
	siginfo_t si;
	bool shared;
};

/* The instances of @sig pending for @pid, in both queues; or -1. */
static int peek_sig(pid_t pid, int sig, struct pending *out, int max)
{
	struct ptrace_peeksiginfo_args args;
	siginfo_t si[32];
	int q, i, n, cnt = 0;

	for (q = 0; q < 2; q++) {
		args.off = 0;
		args.flags = q ? PTRACE_PEEKSIGINFO_SHARED : 0;
		args.nr = 32;
		n = bts_req(PTRACE_PEEKSIGINFO, pid, &args, (unsigned long)si);
		if (n < 0)
			return -1;
		for (i = 0; i < n; i++) {
			if (si[i].si_signo != sig)
				continue;
			if (cnt < max) {
				out[cnt].si = si[i];
				out[cnt].shared = q;
			}
			cnt++;
		}
	}
	return cnt;
}

static bool from_kernel(const struct pending *p)
{
	return p->si.si_code == SI_KERNEL && p->si.si_uid != MARK_UID;
}

/*
 * Switch records of @pid: each an arrival or departure (or exec) of @pid
 * with a clock and nothing else, arrivals and departures alternating.
 * Returns NULL or what is wrong.
 */
static const char *check_sched(const struct bts_struct *r, long n, pid_t pid)
{
	long i;

	for (i = 0; i < n; i++) {
		if (r[i].qualifier != BTS_TASK_ARRIVES &&
		    r[i].qualifier != BTS_TASK_DEPARTS &&
		    r[i].qualifier != BTS_TASK_EXEC)
			return "a record is not a switch";
		if (r[i].pid != (__u32)pid)
			return "pid is not the tracee's";
		if (r[i].from || r[i].to || !r[i].clock)
			return "unused fields not 0 or no clock";
		if (i && r[i].qualifier != BTS_TASK_EXEC &&
		    r[i - 1].qualifier == r[i].qualifier)
			return "arrivals and departures do not alternate";
	}
	return NULL;
}

/*
 * Everything a tracer can see without changing it, but @lost, the count
 * of records dropped, which grows while a full linear buffer's tracee
 * runs: kept aside from what same_snapshot() compares.
 */
struct snapshot {
	struct ptrace_bts_config st;
	long n;
	struct bts_struct r[MAX_RECS];
	__u64 lost;
};

static int take_snapshot(pid_t pid, struct snapshot *s)
{
	long i;

	memset(s, 0, sizeof(*s));
	if (bts_status(pid, &s->st))
		return -1;
	s->lost = s->st.lost;
	s->st.lost = 0;
	s->n = bts_size(pid);
	if (s->n < 0 || s->n > MAX_RECS)
		return -1;
	for (i = 0; i < s->n; i++)
		if (bts_req(PTRACE_BTS_GET, pid, &s->r[i], i))
			return -1;
	return 0;
}

static bool same_snapshot(pid_t pid, const struct snapshot *s)
{
	static struct snapshot now;

	return !take_snapshot(pid, &now) &&
	       !memcmp(&now, s, offsetof(struct snapshot, lost));
}

/* Whether the kernel serves PTRACE_BTS_* (CONFIG_X86_PTRACE_BTS). */
static bool bts_available(void)
{
	pid_t pid = start_tracee(body_pause, 0, 0, true);
	long ret;

	if (pid < 0)
		return true;	/* the test that follows fails for it */
	ret = bts_size(pid);
	finish(pid);
	return ret >= 0 || errno != EIO;
}

#define NO_BTS	"no PTRACE_BTS_* in this kernel (CONFIG_X86_PTRACE_BTS)"

#define ASSERT_SCHED(r, n, pid) do {					\
	const char *__why = check_sched(r, n, pid);			\
	ASSERT_EQ(0, !!__why) TH_LOG("%s", __why);			\
} while (0)

#define ASSERT_ERRNO(err, call) do {					\
	errno = 0;							\
	ASSERT_EQ(-1, (call));						\
	ASSERT_EQ(err, errno);						\
} while (0)

#define ASSERT_STOPSIG(sig, status) do {				\
	int __st = (status);						\
	ASSERT_TRUE(WIFSTOPPED(__st)) TH_LOG("status %#x", __st);	\
	ASSERT_EQ(sig, WSTOPSIG(__st));					\
} while (0)

/*
 * "a larger structure (from a newer tracer) is accepted if the bytes
 * beyond are 0"; PTRACE_BTS_STATUS writes "that many bytes ... then zeros
 * for the bytes beyond the structure"; and its errors.
 */
TEST(status_and_struct_size)
{
	static unsigned char buf[2 * 4096 + 64];
	long page = sysconf(_SC_PAGESIZE);
	struct ptrace_bts_config *big;
	pid_t pid;
	long i;

	if (!bts_available())
		SKIP(return, NO_BTS);
	pid = start_tracee(body_pause, 0, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_GE((long)sizeof(buf) - 64, page);
	big = (struct ptrace_bts_config *)buf;

	memset(buf, 0xaa, page + 64);
	ASSERT_EQ(0, bts_req(PTRACE_BTS_STATUS, pid, buf, page));
	EXPECT_EQ(0U, big->size);
	EXPECT_EQ(0U, big->flags);
	EXPECT_EQ(0U, big->signal);
	EXPECT_EQ(REC, big->bts_size);
	for (i = sizeof(*big); i < page; i++)
		ASSERT_EQ(0, buf[i]) TH_LOG("STATUS byte %ld", i);
	for (; i < page + 64; i++)
		ASSERT_EQ(0xaa, buf[i]) TH_LOG("STATUS wrote byte %ld", i);

	/* A larger structure with a zero tail, up to a page. */
	memset(buf, 0, page + 64);
	big->size = NREC(8);
	big->flags = PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED | PTRACE_BTS_O_SIGNAL;
	big->signal = SIGUSR1;
	ASSERT_EQ(0, bts_req(PTRACE_BTS_CONFIG, pid, buf, sizeof(*big) + 8));
	big->bts_size = REC;
	ASSERT_EQ(0, bts_req(PTRACE_BTS_CONFIG, pid, buf, page));
	ASSERT_EQ(0, bts_req(PTRACE_BTS_CONFIG, pid, buf, sizeof(*big)));

	/* The flags in effect, without PTRACE_BTS_O_ALLOC. */
	memset(buf, 0xaa, page + 64);
	ASSERT_EQ(0, bts_req(PTRACE_BTS_STATUS, pid, buf, sizeof(*big) + 8));
	EXPECT_EQ(NREC(8), big->size);
	EXPECT_EQ((__u32)(PTRACE_BTS_O_SCHED | PTRACE_BTS_O_SIGNAL), big->flags);
	EXPECT_EQ((__u32)SIGUSR1, big->signal);
	EXPECT_EQ(REC, big->bts_size);
	for (i = sizeof(*big); i < (long)sizeof(*big) + 8; i++)
		ASSERT_EQ(0, buf[i]);
	ASSERT_EQ(0xaa, buf[i]);

	ASSERT_ERRNO(EINVAL, bts_req(PTRACE_BTS_STATUS, pid, buf,
				     PTRACE_BTS_CONFIG_SIZE_VER0 - 1));
	ASSERT_ERRNO(E2BIG, bts_req(PTRACE_BTS_STATUS, pid, buf, page + 1));
	ASSERT_ERRNO(EFAULT, bts_req(PTRACE_BTS_STATUS, pid, NULL, sizeof(*big)));

	/* Not stopped, not attached. */
	ASSERT_EQ(0, bts_req(PTRACE_CONT, pid, NULL, 0));
	ASSERT_ERRNO(ESRCH, bts_req(PTRACE_BTS_STATUS, pid, buf, sizeof(*big)));
	ASSERT_ERRNO(ESRCH, bts_req(PTRACE_BTS_STATUS, getppid(), buf, sizeof(*big)));
	finish(pid);
}

/*
 * "size 0 frees the buffer, and with it everything"; "Without this flag
 * size must be 0 or the current size, and the buffer and its records
 * stay"; "flags 0 stops recording and keeps the records".
 */
TEST(config_keeps_and_frees)
{
	struct ptrace_bts_config st;
	struct bts_struct r[32];
	long n0, n;
	pid_t pid;

	if (!bts_available())
		SKIP(return, NO_BTS);
	pid = start_tracee(body_stops, 2, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_config(pid, NREC(32), PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED, 0));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	n0 = bts_size(pid);
	ASSERT_LT(0, n0);
	ASSERT_GT(32, n0);

	/* flags 0: recording stops, the records and the buffer stay. */
	ASSERT_EQ(0, bts_config(pid, 0, 0, 0));
	ASSERT_EQ(0, bts_status(pid, &st));
	EXPECT_EQ(NREC(32), st.size);
	EXPECT_EQ(0U, st.flags);
	ASSERT_EQ(n0, bts_size(pid));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_EQ(n0, bts_size(pid));

	/* The current size without ALLOC: the records stay, recording resumes. */
	ASSERT_EQ(0, bts_config(pid, NREC(32), PTRACE_BTS_O_SCHED, 0));
	ASSERT_EQ(n0, bts_size(pid));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	n = bts_size(pid);
	ASSERT_LT(n0, n);
	ASSERT_EQ(n, bts_drain(pid, r, 32));
	ASSERT_SCHED(r, n, pid);

	/* ALLOC: the old buffer and its records go. */
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_LT(0, bts_size(pid));
	ASSERT_EQ(0, bts_config(pid, NREC(16), PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED, 0));
	ASSERT_EQ(0, bts_size(pid));

	/* ALLOC of size 0 frees everything. */
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_LT(0, bts_size(pid));
	ASSERT_EQ(0, bts_config(pid, 0, PTRACE_BTS_O_ALLOC, 0));
	ASSERT_EQ(0, bts_status(pid, &st));
	EXPECT_EQ(0U, st.size);
	EXPECT_EQ(0U, st.flags);
	EXPECT_EQ(0U, st.signal);
	ASSERT_EQ(0, bts_size(pid));
	ASSERT_EQ(0, bts_drain(pid, NULL, 0));
	finish(pid);
}

struct bad_config {
	const char *what;
	__u32 size, flags, signal, bts_size;
	int err;
};

#define A	PTRACE_BTS_O_ALLOC
#define S	PTRACE_BTS_O_SCHED
#define G	PTRACE_BTS_O_SIGNAL

static const struct bad_config bad_configs[] = {
	{ "unknown flag", 0, S | 0x20, 0, 0, EINVAL },
	{ "unknown high flag", 0, S | 0x80000000u, 0, 0, EINVAL },
	{ "size not a multiple", NREC(8) + 1, A | S, 0, 0, EINVAL },
	{ "size above the maximum", PTRACE_BTS_SIZE_MAX + REC, A | S, 0, 0, EINVAL },
	{ "size 0 with flags", 0, A | S, 0, 0, EINVAL },
	{ "size without ALLOC", NREC(8), S, 0, 0, EINVAL },
	{ "signal without O_SIGNAL", 0, S, SIGUSR1, 0, EINVAL },
	{ "O_SIGNAL without signal", 0, S | G, 0, 0, EINVAL },
	{ "SIGKILL", 0, S | G, SIGKILL, 0, EINVAL },
	{ "SIGSTOP", 0, S | G, SIGSTOP, 0, EINVAL },
	{ "signal 65", 0, S | G, 65, 0, EINVAL },
	{ "bts_size", 0, S, 0, REC - 8, EINVAL },
	{ "new buffer, bad signal", NREC(8), A | S | G, SIGKILL, 0, EINVAL },
	{ "new buffer, bad bts_size", NREC(8), A | S, 0, REC + 8, EINVAL },
};

/*
 * "On an error nothing changed: the buffer, the records, the flags and the
 * recording are as before", for every error of the argument checks.
 */
TEST(config_error_changes_nothing)
{
	static unsigned char buf[2 * 4096 + 1];
	long page = sysconf(_SC_PAGESIZE);
	static struct snapshot snap;
	struct ptrace_bts_config cfg;
	const struct bad_config *b;
	long ret;
	pid_t pid;

	if (!bts_available())
		SKIP(return, NO_BTS);
	pid = start_tracee(body_stops, 2, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_config(pid, NREC(32), A | S, 0));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_EQ(0, take_snapshot(pid, &snap));
	ASSERT_LT(0, snap.n);

	for (b = bad_configs; b < bad_configs + ARRAY_SIZE(bad_configs); b++) {
		cfg.size = b->size;
		cfg.flags = b->flags;
		cfg.signal = b->signal;
		cfg.bts_size = b->bts_size;
		errno = 0;
		ret = bts_req(PTRACE_BTS_CONFIG, pid, &cfg, sizeof(cfg));
		EXPECT_EQ(-1, ret) TH_LOG("%s accepted", b->what);
		EXPECT_EQ(b->err, errno) TH_LOG("%s", b->what);
		ASSERT_TRUE(same_snapshot(pid, &snap)) TH_LOG("%s changed", b->what);
	}

	ASSERT_GE((long)sizeof(buf) - 1, page);
	memcpy(buf, &snap.st, sizeof(snap.st));
	ASSERT_ERRNO(EINVAL, bts_req(PTRACE_BTS_CONFIG, pid, buf,
				     PTRACE_BTS_CONFIG_SIZE_VER0 - 1));
	ASSERT_ERRNO(EINVAL, bts_req(PTRACE_BTS_CONFIG, pid, buf, 0));
	ASSERT_ERRNO(E2BIG, bts_req(PTRACE_BTS_CONFIG, pid, buf, page + 1));
	buf[sizeof(cfg) + 3] = 1;
	ASSERT_ERRNO(E2BIG, bts_req(PTRACE_BTS_CONFIG, pid, buf, sizeof(cfg) + 8));
	ASSERT_ERRNO(EFAULT, bts_req(PTRACE_BTS_CONFIG, pid, NULL, sizeof(cfg)));
	ASSERT_TRUE(same_snapshot(pid, &snap));

	/* O_TRACE fails where the cpu has no BTS, changing nothing. */
	ret = bts_config(pid, 0, PTRACE_BTS_O_TRACE | S, 0);
	if (ret) {
		EXPECT_TRUE(errno == EOPNOTSUPP || errno == EBUSY);
		ASSERT_TRUE(same_snapshot(pid, &snap)) TH_LOG("O_TRACE changed");
	} else {
		ASSERT_EQ(0, bts_config(pid, 0, S, 0));
	}

	/* The recording goes on. */
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_LT(snap.n, bts_size(pid));
	finish(pid);

	/* A recording flag needs a buffer: a tracee without one. */
	pid = start_tracee(body_stops, 2, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_ERRNO(EINVAL, bts_config(pid, 0, S, 0));
	ASSERT_ERRNO(EINVAL, bts_config(pid, 0, S | G, SIGUSR1));
	ASSERT_EQ(0, take_snapshot(pid, &snap));
	EXPECT_EQ(0U, snap.st.size);
	EXPECT_EQ(0U, snap.st.flags);
	EXPECT_EQ(0, snap.n);
	finish(pid);
}

/*
 * EPERM: "PTRACE_BTS_O_ALLOC with a RLIMIT_MEMLOCK of 0 and no
 * CAP_IPC_LOCK"; ENOMEM: "A new buffer is charged before the old one is
 * given back"; and on both errors nothing changed.
 */
TEST(config_memlock_changes_nothing)
{
	struct rlimit rl = { .rlim_cur = 0, .rlim_max = 4096 };
	static struct snapshot snap;
	pid_t pid;

	if (geteuid())
		SKIP(return, "needs root to become an unprivileged user");
	if (!bts_available())
		SKIP(return, NO_BTS);
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	ASSERT_EQ(0, setgid(TEST_UID));
	ASSERT_EQ(0, setuid(TEST_UID));
	ASSERT_EQ(0, prctl(PR_SET_DUMPABLE, 1));

	pid = start_tracee(body_stops, 2, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_ERRNO(EPERM, bts_config(pid, NREC(8), A | S, 0));
	ASSERT_EQ(0, take_snapshot(pid, &snap));
	EXPECT_EQ(0U, snap.st.size);

	/* 128 records take at most a page and at least 128 * 24 bytes. */
	rl.rlim_cur = 4096;
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	ASSERT_EQ(0, bts_config(pid, NREC(128), A | S, 0));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_EQ(0, take_snapshot(pid, &snap));
	ASSERT_LT(0, snap.n);

	ASSERT_ERRNO(ENOMEM, bts_config(pid, NREC(128), A | S, 0));
	ASSERT_TRUE(same_snapshot(pid, &snap));
	ASSERT_ERRNO(ENOMEM, bts_config(pid, NREC(256), A | S, 0));
	ASSERT_TRUE(same_snapshot(pid, &snap));
	rl.rlim_cur = 0;
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	ASSERT_ERRNO(EPERM, bts_config(pid, NREC(8), A | S, 0));
	ASSERT_TRUE(same_snapshot(pid, &snap));

	/* The recording went on; freeing gives the charge back. */
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_LT(snap.n, bts_size(pid));
	rl.rlim_cur = 4096;
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	ASSERT_EQ(0, bts_config(pid, 0, A, 0));
	ASSERT_EQ(0, bts_config(pid, NREC(128), A | S, 0));
	finish(pid);
}

/*
 * DRAIN "Copies every record, oldest first, and empties the buffer"; EIO
 * "nothing was copied"; EFAULT "the records are kept"; "0 if there are
 * none (addr is not used then)"; a circular buffer overwrites the oldest,
 * and "a DRAIN into a user buffer of that many bytes never fails for lack
 * of room".
 */
TEST(drain)
{
	struct bts_struct g[8], d[9];
	void *ro;
	pid_t pid;
	long i;

	if (!bts_available())
		SKIP(return, NO_BTS);
	pid = start_tracee(body_stops, NAPS, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_config(pid, NREC(8), A | S, 0));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_EQ(8, bts_size(pid));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, bts_req(PTRACE_BTS_GET, pid, &g[i], i));
	ASSERT_ERRNO(EINVAL, bts_req(PTRACE_BTS_GET, pid, &d[0], 8));
	EXPECT_EQ((__u32)BTS_TASK_DEPARTS, g[0].qualifier) TH_LOG("a stop is a departure");

	memset(d, 0x5a, sizeof(d));
	ASSERT_ERRNO(EIO, bts_drain(pid, d, 7));
	for (i = 0; i < (long)sizeof(d); i++)
		ASSERT_EQ(0x5a, ((unsigned char *)d)[i]) TH_LOG("EIO copied");
	ASSERT_EQ(8, bts_size(pid));

	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(ro != MAP_FAILED);
	ASSERT_ERRNO(EFAULT, bts_drain(pid, ro, 8));
	ASSERT_EQ(8, bts_size(pid));
	munmap(ro, 4096);

	ASSERT_EQ(8, bts_drain(pid, d, 8));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, memcmp(&d[i], &g[7 - i], REC)) TH_LOG("record %ld", i);
	ASSERT_SCHED(d, 8, pid);
	ASSERT_EQ(0, bts_size(pid));
	ASSERT_EQ(0, bts_drain(pid, NULL, 0));
	ASSERT_EQ(0, bts_drain(pid, NULL, 8));

	/* Circular again: full, the newest is the stop's departure. */
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_EQ(8, bts_drain(pid, d, 9));
	ASSERT_SCHED(d, 8, pid);
	ASSERT_EQ((__u32)BTS_TASK_DEPARTS, d[7].qualifier);
	finish(pid);
}

/*
 * "With it the buffer is linear: when it is full the tracee gets the
 * configured signal and further records are dropped until the buffer is
 * emptied"; si_code SI_KERNEL; the drain "arms the signal again".
 */
TEST(linear_buffer_overflow)
{
	static struct snapshot snap;
	struct bts_struct d[8];
	siginfo_t si;
	pid_t pid;

	if (!bts_available())
		SKIP(return, NO_BTS);
	pid = start_tracee(body_stops, NAPS, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_config(pid, NREC(8), A | S | G, SIGUSR2));
	ASSERT_STOPSIG(SIGUSR2, resume(pid, 0));
	ASSERT_EQ(0, bts_req(PTRACE_GETSIGINFO, pid, NULL, (unsigned long)&si));
	EXPECT_EQ(SIGUSR2, si.si_signo);
	EXPECT_EQ(SI_KERNEL, si.si_code);
	ASSERT_EQ(0, take_snapshot(pid, &snap));
	ASSERT_EQ(8, snap.n);

	/* Not emptied: the tracee runs on, nothing is recorded or sent. */
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_TRUE(same_snapshot(pid, &snap));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_TRUE(same_snapshot(pid, &snap));

	/* The oldest records stay: the first is the arrival after resuming. */
	ASSERT_EQ(8, bts_drain(pid, d, 8));
	ASSERT_EQ((__u32)BTS_TASK_ARRIVES, d[0].qualifier);
	ASSERT_SCHED(d, 8, pid);
	ASSERT_STOPSIG(SIGUSR2, resume(pid, 0));
	ASSERT_EQ(8, bts_size(pid));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));

	/* CLEAR arms the signal again, too. */
	ASSERT_EQ(0, bts_req(PTRACE_BTS_CLEAR, pid, NULL, 0));
	ASSERT_EQ(0, bts_size(pid));
	ASSERT_STOPSIG(SIGUSR2, resume(pid, 0));
	ASSERT_EQ(8, bts_size(pid));
	finish(pid);
}

enum take_back { BY_DRAIN, BY_CLEAR, BY_CONFIG, BY_DETACH };

FIXTURE(stale_signal) {};
FIXTURE_SETUP(stale_signal) {}
FIXTURE_TEARDOWN(stale_signal) {}
FIXTURE_VARIANT(stale_signal) {
	enum take_back how;
};

FIXTURE_VARIANT_ADD(stale_signal, drain) { .how = BY_DRAIN };
FIXTURE_VARIANT_ADD(stale_signal, clear) { .how = BY_CLEAR };
FIXTURE_VARIANT_ADD(stale_signal, config) { .how = BY_CONFIG };
FIXTURE_VARIANT_ADD(stale_signal, detach) { .how = BY_DETACH };

/*
 * "PTRACE_BTS_DRAIN, PTRACE_BTS_CLEAR, every PTRACE_BTS_CONFIG and
 * detaching take it back, so the tracee never stops for an overflow of a
 * buffer that was emptied."  The tracee blocks the signal, so it is still
 * pending at the next stop.
 */
TEST_F(stale_signal, taken_back)
{
	int sig = SIGRTMIN + 1, status;
	struct bts_struct d[8];
	struct pending p[4];
	pid_t pid;

	if (!bts_available())
		SKIP(return, NO_BTS);
	pid = start_tracee(body_stale, sig, sig, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_config(pid, NREC(8), A | S | G, sig));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_EQ(8, bts_size(pid));
	ASSERT_EQ(1, peek_sig(pid, sig, p, 4));
	ASSERT_TRUE(from_kernel(&p[0]));

	switch (variant->how) {
	case BY_DRAIN:
		ASSERT_EQ(8, bts_drain(pid, d, 8));
		break;
	case BY_CLEAR:
		ASSERT_EQ(0, bts_req(PTRACE_BTS_CLEAR, pid, NULL, 0));
		break;
	case BY_CONFIG:
		ASSERT_EQ(0, bts_config(pid, NREC(8), A | S | G, sig));
		break;
	case BY_DETACH:
		break;
	}
	if (variant->how != BY_DETACH)
		ASSERT_EQ(0, peek_sig(pid, sig, p, 4));
	ASSERT_EQ(0, bts_req(PTRACE_DETACH, pid, NULL, 0));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status)) TH_LOG("the signal is still pending");
}

/*
 * "Only the instance the kernel queued goes; the same signal sent by
 * someone else stays, even one that looks the same (SI_KERNEL)": the
 * tracee queues SI_KERNEL instances of the real-time signal to itself,
 * one before the overflow and one after it.
 */
TEST(others_instances_stay)
{
	int sig = SIGRTMIN + 2, i, n;
	struct bts_struct d[8];
	struct pending p[4];
	pid_t pid;

	if (!bts_available())
		SKIP(return, NO_BTS);
	pid = start_tracee(body_self_queue, sig, sig, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_config(pid, NREC(8), A | S | G, sig));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_EQ(8, bts_size(pid));
	n = peek_sig(pid, sig, p, 4);
	ASSERT_EQ(3, n);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(SI_KERNEL, p[i].si.si_code);
		n -= from_kernel(&p[i]);
	}
	ASSERT_EQ(2, n) TH_LOG("not one instance from the kernel");

	ASSERT_EQ(8, bts_drain(pid, d, 8));
	ASSERT_EQ(2, peek_sig(pid, sig, p, 4));
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(MARK_UID, p[i].si.si_uid);
		EXPECT_EQ(pid, p[i].si.si_pid);
	}
	ASSERT_EQ(0, bts_req(PTRACE_BTS_CLEAR, pid, NULL, 0));
	ASSERT_EQ(0, bts_config(pid, 0, 0, 0));
	ASSERT_EQ(2, peek_sig(pid, sig, p, 4));
	finish(pid);
}

/*
 * "If someone else's instance is pending when the buffer fills, the
 * kernel queues none, and a drain takes none back".  The tracer sends
 * the (blocked) signal to both of the tracee's queues first.
 */
TEST(non_rt_others_first)
{
	struct bts_struct d[8];
	struct pending p[4];
	pid_t pid;
	int i;

	if (!bts_available())
		SKIP(return, NO_BTS);
	pid = start_tracee(body_stops, NAPS, SIGUSR1, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_config(pid, NREC(8), A | S | G, SIGUSR1));
	ASSERT_EQ(0, kill(pid, SIGUSR1));
	ASSERT_EQ(0, syscall(SYS_tgkill, pid, pid, SIGUSR1));
	ASSERT_EQ(2, peek_sig(pid, SIGUSR1, p, 4));

	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_EQ(8, bts_size(pid));
	ASSERT_EQ(2, peek_sig(pid, SIGUSR1, p, 4));
	for (i = 0; i < 2; i++) {
		EXPECT_NE(SI_KERNEL, p[i].si.si_code);
		EXPECT_EQ(getpid(), p[i].si.si_pid);
	}
	ASSERT_EQ(8, bts_drain(pid, d, 8));
	ASSERT_EQ(2, peek_sig(pid, SIGUSR1, p, 4));
	finish(pid);
}

/*
 * "if the kernel's is pending when someone else sends the signal, the two
 * are one, and a drain takes both back".  The tracer sends the signal to
 * the queue the kernel's instance is in.
 */
TEST(non_rt_kernel_first)
{
	struct bts_struct d[8];
	struct pending p[4];
	pid_t pid;
	long ret;

	if (!bts_available())
		SKIP(return, NO_BTS);
	pid = start_tracee(body_stops, NAPS, SIGUSR2, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_config(pid, NREC(8), A | S | G, SIGUSR2));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_EQ(8, bts_size(pid));
	ASSERT_EQ(1, peek_sig(pid, SIGUSR2, p, 4));
	ASSERT_TRUE(from_kernel(&p[0]));

	if (p[0].shared)
		ret = kill(pid, SIGUSR2);
	else
		ret = syscall(SYS_tgkill, pid, pid, SIGUSR2);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(1, peek_sig(pid, SIGUSR2, p, 4));
	ASSERT_EQ(8, bts_drain(pid, d, 8));
	ASSERT_EQ(0, peek_sig(pid, SIGUSR2, p, 4));
	finish(pid);
}

/*
 * "A configuration that keeps a full linear buffer with
 * PTRACE_BTS_O_SIGNAL sends the overflow signal at once"; a real-time
 * signal shows that a second such configuration takes the first instance
 * back ("every PTRACE_BTS_CONFIG").
 */
TEST(full_buffer_config_signals)
{
	int sig = SIGRTMIN + 3;
	struct pending p[4];
	siginfo_t si;
	pid_t pid;

	if (!bts_available())
		SKIP(return, NO_BTS);
	pid = start_tracee(body_stops, NAPS, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_config(pid, NREC(8), A | S, 0));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_EQ(8, bts_size(pid));
	ASSERT_EQ(0, peek_sig(pid, sig, p, 4));

	ASSERT_EQ(0, bts_config(pid, 0, S | G, sig));
	ASSERT_EQ(1, peek_sig(pid, sig, p, 4));
	ASSERT_TRUE(from_kernel(&p[0]));
	ASSERT_EQ(0, bts_config(pid, NREC(8), S | G, sig));
	ASSERT_EQ(1, peek_sig(pid, sig, p, 4));
	ASSERT_EQ(8, bts_size(pid));

	ASSERT_STOPSIG(sig, resume(pid, 0));
	ASSERT_EQ(0, bts_req(PTRACE_GETSIGINFO, pid, NULL, (unsigned long)&si));
	EXPECT_EQ(SI_KERNEL, si.si_code);
	finish(pid);
}

static int wait_traced(pid_t pid)
{
	char path[64], buf[256], *s;
	int i, fd, n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	for (i = 0; i < 10000; i++) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			return -1;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			return -1;
		buf[n] = 0;
		s = strrchr(buf, ')');
		if (s && s[1] == ' ' && s[2] == 't')
			return 0;
		usleep(1000);
	}
	return -1;
}

enum look { UNREAPED, WNOWAIT_LOOK, REAPED };

/*
 * The tracer: trace a new tracee (its child) with an overflow signal
 * whose default action kills it, let it reach the signal-delivery-stop,
 * look at the stop as @look says and exit without detaching.  The exit
 * code says which step failed.
 */
static int tracer_exits_in_stop(enum look look)
{
	siginfo_t si;
	int status;
	pid_t pid;

	pid = start_tracee(body_naps_exit, 4 * NAPS, 0, false);
	if (pid < 0)
		return 2;
	if (bts_config(pid, NREC(8), A | S | G, SIGUSR1))
		return 3;
	if (bts_req(PTRACE_CONT, pid, NULL, 0))
		return 4;
	switch (look) {
	case UNREAPED:
		if (wait_traced(pid))
			return 5;
		break;
	case WNOWAIT_LOOK:
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, pid, &si, WSTOPPED | WNOWAIT) ||
		    si.si_code != CLD_TRAPPED || si.si_status != SIGUSR1)
			return 6;
		break;
	case REAPED:
		if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status) ||
		    WSTOPSIG(status) != SIGUSR1)
			return 7;
		break;
	}
	if (bts_req(PTRACE_GETSIGINFO, pid, NULL, (unsigned long)&si) ||
	    si.si_signo != SIGUSR1 || si.si_code != SI_KERNEL)
		return 8;
	return 0;
}

FIXTURE(tracer_exit) {};
FIXTURE_SETUP(tracer_exit) {}
FIXTURE_TEARDOWN(tracer_exit) {}
FIXTURE_VARIANT(tracer_exit) {
	enum look look;
};

FIXTURE_VARIANT_ADD(tracer_exit, unreaped) { .look = UNREAPED };
FIXTURE_VARIANT_ADD(tracer_exit, wnowait) { .look = WNOWAIT_LOOK };
FIXTURE_VARIANT_ADD(tracer_exit, reaped) { .look = REAPED };

/*
 * "If the tracer exits without detaching while the tracee is in the
 * signal-delivery-stop of its overflow signal, and the tracer has neither
 * reaped that stop with wait(2) (a WNOWAIT look does not count) nor
 * resumed the tracee, the tracee resumes without the signal"; a reaped
 * stop ends as wait(2) left it, without the signal, and "from that moment
 * the tracee gets no overflow signal".  We are the subreaper that inherits
 * the tracee.
 */
TEST_F(tracer_exit, in_overflow_stop)
{
	int status, ret;
	pid_t tracer;

	if (!bts_available())
		SKIP(return, NO_BTS);
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	tracer = fork();
	ASSERT_LE(0, tracer);
	if (!tracer)
		_exit(tracer_exits_in_stop(variant->look));
	ASSERT_EQ(tracer, waitpid(tracer, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ret = WEXITSTATUS(status);
	ASSERT_EQ(0, ret) TH_LOG("the tracer failed at step %d", ret);

	/* The orphaned tracee is ours now; it must exit by itself. */
	ASSERT_LT(0, waitpid(-1, &status, 0));
	ASSERT_FALSE(WIFSIGNALED(status)) TH_LOG("killed by signal %d", WTERMSIG(status));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
}

/*
 * The tracer of tracer_exit_later_tracer: configure, then exit without
 * detaching while the tracee is in its first (reaped) stop.
 */
static int tracer_configures_and_exits(void)
{
	pid_t pid;

	pid = start_tracee(body_stops, 4 * NAPS, 0, false);
	if (pid < 0)
		return 2;
	if (bts_config(pid, NREC(8), A | S | G, SIGUSR1))
		return 3;
	return 0;
}

/*
 * "A tracer that exits without detaching ... takes its configuration with
 * it: from that moment the tracee gets no overflow signal"; "A tracer
 * never sees another tracer's records": a later tracer starts with
 * nothing.
 */
TEST(tracer_exit_later_tracer)
{
	struct ptrace_bts_config st;
	struct bts_struct d[8];
	int status, ret;
	pid_t tracer, pid;
	long n;

	if (!bts_available())
		SKIP(return, NO_BTS);
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	tracer = fork();
	ASSERT_LE(0, tracer);
	if (!tracer)
		_exit(tracer_configures_and_exits());
	ASSERT_EQ(tracer, waitpid(tracer, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ret = WEXITSTATUS(status);
	ASSERT_EQ(0, ret) TH_LOG("the tracer failed at step %d", ret);

	/* The tracee overflows its buffer, untraced, and stops itself. */
	pid = waitpid(-1, &status, WUNTRACED);
	ASSERT_LT(0, pid);
	ASSERT_FALSE(WIFSIGNALED(status)) TH_LOG("killed by signal %d", WTERMSIG(status));
	ASSERT_STOPSIG(SIGSTOP, status);

	ASSERT_EQ(0, bts_req(PTRACE_ATTACH, pid, NULL, 0));
	ASSERT_EQ(pid, waitpid(pid, &status, __WALL));
	ASSERT_EQ(0, bts_status(pid, &st));
	EXPECT_EQ(0U, st.size);
	EXPECT_EQ(0U, st.flags);
	EXPECT_EQ(0U, st.signal);
	ASSERT_EQ(0, bts_size(pid));
	ASSERT_EQ(0, bts_drain(pid, NULL, 0));

	ASSERT_EQ(0, bts_config(pid, NREC(8), A | S, 0));
	ASSERT_EQ(0, bts_size(pid));
	/* It stopped its group itself: that lasts until a SIGCONT. */
	ASSERT_EQ(0, kill(pid, SIGCONT));
	ASSERT_STOPSIG(SIGCONT, resume(pid, 0));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	n = bts_drain(pid, d, 8);
	ASSERT_EQ(8, n);
	ASSERT_SCHED(d, n, pid);
	finish(pid);
}

/*
 * "Detaching (PTRACE_DETACH) ... free the buffer and stop recording at
 * once"; "The signal is sent only while the tracer that asked for it
 * traces the tracee"; a later tracer, even the same process attaching
 * again, starts with nothing.
 */
TEST(detach_then_attach)
{
	struct ptrace_bts_config st;
	int status;
	pid_t pid;

	if (!bts_available())
		SKIP(return, NO_BTS);
	pid = start_tracee(body_stops, NAPS, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_config(pid, NREC(8), A | S | G, SIGUSR1));
	ASSERT_STOPSIG(SIGUSR1, resume(pid, 0));
	ASSERT_EQ(8, bts_size(pid));
	ASSERT_EQ(0, bts_req(PTRACE_BTS_CLEAR, pid, NULL, 0));
	ASSERT_EQ(0, bts_req(PTRACE_DETACH, pid, NULL, 0));

	/* Untraced, it stops itself; no SIGUSR1 killed it on the way. */
	ASSERT_EQ(pid, waitpid(pid, &status, WUNTRACED));
	ASSERT_STOPSIG(SIGSTOP, status);
	ASSERT_EQ(0, kill(pid, SIGCONT));
	ASSERT_EQ(pid, waitpid(pid, &status, WUNTRACED));
	ASSERT_STOPSIG(SIGSTOP, status);

	ASSERT_EQ(0, bts_req(PTRACE_ATTACH, pid, NULL, 0));
	ASSERT_EQ(pid, waitpid(pid, &status, __WALL));
	ASSERT_EQ(0, bts_status(pid, &st));
	EXPECT_EQ(0U, st.size);
	EXPECT_EQ(0U, st.flags);
	EXPECT_EQ(0U, st.signal);
	ASSERT_EQ(0, bts_size(pid));
	finish(pid);
}

/*
 * "A child of the tracee starts with nothing, whether or not it is
 * traced": one child traced with PTRACE_O_TRACEFORK, one seized later.
 */
TEST(child_starts_with_nothing)
{
	struct ptrace_bts_config st;
	unsigned long msg;
	pid_t pid, child;
	long word;
	int status;

	if (!bts_available())
		SKIP(return, NO_BTS);
	pid = start_tracee(body_fork_twice, 0, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_config(pid, NREC(64), A | S | G, SIGUSR1));
	ASSERT_EQ(0, bts_req(PTRACE_SETOPTIONS, pid, NULL, PTRACE_O_TRACEFORK));
	status = resume(pid, 0);
	ASSERT_STOPSIG(SIGTRAP, status);
	ASSERT_EQ(PTRACE_EVENT_FORK, status >> 16);
	ASSERT_EQ(0, bts_req(PTRACE_GETEVENTMSG, pid, NULL, (unsigned long)&msg));
	child = msg;
	ASSERT_EQ(child, waitpid(child, &status, __WALL));
	ASSERT_EQ(0, bts_status(child, &st));
	EXPECT_EQ(0U, st.size);
	EXPECT_EQ(0U, st.flags);
	EXPECT_EQ(0U, st.signal);
	ASSERT_EQ(0, bts_size(child));
	finish(child);

	ASSERT_EQ(0, bts_req(PTRACE_SETOPTIONS, pid, NULL, 0));
	/* The first child is dead: its SIGCHLD comes on the way. */
	ASSERT_STOPSIG(SIGSTOP, resume_past_sigchld(pid));
	ASSERT_STOPSIG(SIGSTOP, resume_past_sigchld(pid));
	ASSERT_EQ(0, bts_req(PTRACE_PEEKDATA, pid, (void *)&forked_pid, (unsigned long)&word));
	child = word;
	ASSERT_LT(0, child);
	ASSERT_EQ(0, bts_req(PTRACE_SEIZE, child, NULL, 0));
	ASSERT_EQ(0, bts_req(PTRACE_INTERRUPT, child, NULL, 0));
	ASSERT_EQ(child, waitpid(child, &status, __WALL));
	ASSERT_EQ(0, bts_status(child, &st));
	EXPECT_EQ(0U, st.size);
	EXPECT_EQ(0U, st.flags);
	ASSERT_EQ(0, bts_size(child));
	ASSERT_EQ(0, bts_req(PTRACE_DETACH, child, NULL, 0));
	kill(child, SIGKILL);

	/* The tracee's own configuration is as it was. */
	ASSERT_EQ(0, bts_status(pid, &st));
	EXPECT_EQ(NREC(64), st.size);
	EXPECT_EQ((__u32)(S | G), st.flags);
	finish(pid);
}

/*
 * "exec keeps the configuration; PTRACE_BTS_O_SCHED marks it with a
 * BTS_TASK_EXEC record"; "the records before it are of the old program".
 */
TEST(exec_keeps_configuration)
{
	struct ptrace_bts_config st, st0;
	struct bts_struct d[64];
	int sig = SIGRTMIN + 4;
	long n, i, exec = -1;
	int status;
	pid_t pid;

	if (access("/proc/self/exe", X_OK))
		SKIP(return, "no /proc/self/exe to execute");
	if (!bts_available())
		SKIP(return, NO_BTS);
	pid = start_tracee(body_exec, 2, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_req(PTRACE_SETOPTIONS, pid, NULL, PTRACE_O_TRACEEXEC));
	ASSERT_EQ(0, bts_config(pid, NREC(64), A | S | G, sig));
	ASSERT_EQ(0, bts_status(pid, &st0));
	status = resume(pid, 0);
	ASSERT_STOPSIG(SIGTRAP, status);
	ASSERT_EQ(PTRACE_EVENT_EXEC, status >> 16);

	ASSERT_EQ(0, bts_status(pid, &st));
	ASSERT_EQ(0, memcmp(&st, &st0, sizeof(st)));
	n = bts_drain(pid, d, 64);
	ASSERT_LT(0, n);
	ASSERT_GT(64, n);
	ASSERT_SCHED(d, n, pid);
	for (i = 0; i < n; i++) {
		if (d[i].qualifier != BTS_TASK_EXEC)
			continue;
		ASSERT_EQ(-1, exec) TH_LOG("two exec records");
		exec = i;
	}
	ASSERT_LT(0, exec) TH_LOG("no exec record after the old program's");
	EXPECT_EQ((__u32)BTS_TASK_ARRIVES, d[0].qualifier);
	finish(pid);
}

/*
 * PTRACE_BTS_O_TRACE: "a branch in user mode from ``from`` to ``to``.  A branch
 * into the kernel ... has to 0: no kernel address reaches the tracer".
 * Needs BTS: SKIP with the reason on EOPNOTSUPP (or EBUSY).
 */
TEST(branches)
{
	__u64 user_end = sizeof(long) == 8 ? 1ULL << 63 : 1ULL << 32;
	struct bts_struct d[64];
	long n, i, branches = 0, to_kernel = 0;
	pid_t pid;

	if (!bts_available())
		SKIP(return, NO_BTS);
	pid = start_tracee(body_stops, 1, 0, true);
	ASSERT_LT(0, pid);
	if (bts_config(pid, NREC(64), A | PTRACE_BTS_O_TRACE, 0)) {
		int err = errno;

		finish(pid);
		if (err == EOPNOTSUPP)
			SKIP(return, "the cpu has no BTS (EOPNOTSUPP)");
		if (err == EBUSY)
			SKIP(return, "BTS is in use by perf (EBUSY)");
		ASSERT_EQ(0, err);
	}
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	n = bts_drain(pid, d, 64);
	ASSERT_LT(0, n);
	for (i = 0; i < n; i++) {
		ASSERT_EQ((__u32)BTS_BRANCH, d[i].qualifier);
		ASSERT_EQ(0U, d[i].pid);
		ASSERT_EQ(0ULL, d[i].clock);
		ASSERT_NE(0ULL, d[i].from);
		ASSERT_GT(user_end, d[i].from);
		ASSERT_GT(user_end, d[i].to);
		branches++;
		to_kernel += !d[i].to;
	}
	ASSERT_LT(0, branches);
	ASSERT_LT(0, to_kernel) TH_LOG("no system call seen");
	finish(pid);
}

/* Helpers of the tests below. */

#define TRACEE_ENV	"PTRACE_BTS_DOC_TRACEE"
#define HIGH_CODE	0x300000000ULL	/* a code page above 4 GiB */
#define BIG_RECS	65536

static struct bts_struct big[BIG_RECS];

/*
 * Run by other_width_tracee's tracee, the test program of the other width:
 * a 64-bit one calls a page above 4 GiB, so that a 32-bit tracer must see
 * a branch to and from an address that does not fit in its long.
 */
__attribute__((constructor)) static void tracee_mode(void)
{
	void *p;

	if (!getenv(TRACEE_ENV))
		return;
	if (sizeof(long) == 8) {
		p = mmap((void *)(unsigned long)HIGH_CODE, 4096,
			 PROT_READ | PROT_WRITE | PROT_EXEC,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p != (void *)(unsigned long)HIGH_CODE)
			_exit(3);
		*(unsigned char *)p = 0xc3;	/* ret */
		((void (*)(void))p)();
	}
	_exit(0);
}

/* 0 if the kernel records branches (PTRACE_BTS_O_TRACE), or its errno. */
static int bts_trace_errno(void)
{
	pid_t pid = start_tracee(body_pause, 0, 0, true);
	int err = 0;

	if (pid < 0)
		return -1;
	if (bts_config(pid, NREC(8), A | PTRACE_BTS_O_TRACE, 0))
		err = errno;
	finish(pid);
	return err;
}

/* Why a test of PTRACE_BTS_O_TRACE cannot run here, or NULL. */
static const char *no_bts_trace(void)
{
	switch (bts_trace_errno()) {
	case EOPNOTSUPP:
		return "the cpu has no BTS (EOPNOTSUPP)";
	case EBUSY:
		return "BTS is in use by perf (EBUSY)";
	}
	return NULL;	/* any other error fails the test */
}

#define T	PTRACE_BTS_O_TRACE

/* The first number after @key in /proc/@pid/status, or -1. */
static long proc_status(pid_t pid, const char *key, bool last)
{
	char path[64], buf[4096], *s, *e;
	int fd, n;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	s = strstr(buf, key);
	if (!s)
		return -1;
	s += strlen(key);
	e = strchr(s, '\n');
	if (e)
		*e = 0;
	if (last && strrchr(s, '\t'))
		s = strrchr(s, '\t');
	return strtol(s, NULL, 10);
}

/* Whether @r is a branch in user mode of a tracee whose longs are @bits. */
static bool user_branch(const struct bts_struct *r, int bits)
{
	__u64 end = bits == 64 ? 1ULL << 47 : 1ULL << 32;

	return r->qualifier == BTS_BRANCH && !r->pid && !r->clock &&
	       r->from && r->from < end && r->to < end;
}

/*
 * Description: "the kernel checks that (ptrace_check_attach()) before
 * anything else": every request, valid or not, fails with ESRCH for a
 * tracee that runs, for a stopped process we do not trace and for
 * ourselves; and the failed CLEAR, DRAIN and CONFIG changed nothing.
 */
#define ASSERT_ESRCH(call) do {						\
	errno = 0;							\
	ASSERT_EQ(-1, (call)) TH_LOG("process %d", i);			\
	ASSERT_EQ(ESRCH, errno) TH_LOG("process %d", i);		\
} while (0)

TEST(esrch_before_anything_else)
{
	struct ptrace_bts_config cfg = { .size = NREC(8), .flags = A | S };
	static struct snapshot snap;
	pid_t pids[3], pid, other;
	struct bts_struct r;
	int status, i;

	if (!bts_available())
		SKIP(return, NO_BTS);
	pid = start_tracee(body_pause, 0, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_config(pid, NREC(32), A | S, 0));
	ASSERT_EQ(0, bts_req(PTRACE_CONT, pid, NULL, 0));
	ASSERT_EQ(0, kill(pid, SIGUSR1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_STOPSIG(SIGUSR1, status);
	ASSERT_EQ(0, bts_config(pid, 0, 0, 0));
	ASSERT_EQ(0, take_snapshot(pid, &snap));
	ASSERT_LT(0, snap.n);
	ASSERT_EQ(0, bts_req(PTRACE_CONT, pid, NULL, 0));

	other = fork();
	ASSERT_LE(0, other);
	if (!other) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		body_pause(0);
	}
	ASSERT_EQ(0, kill(other, SIGSTOP));
	ASSERT_EQ(other, waitpid(other, &status, WUNTRACED));

	pids[0] = pid;
	pids[1] = other;
	pids[2] = getpid();
	for (i = 0; i < 3; i++) {
		ASSERT_ESRCH(bts_req(PTRACE_BTS_CONFIG, pids[i], &cfg, sizeof(cfg)));
		ASSERT_ESRCH(bts_config(pids[i], 0, A, 0));
		ASSERT_ESRCH(bts_config(pids[i], 0, S | 0x10, 0));
		ASSERT_ESRCH(bts_req(PTRACE_BTS_CONFIG, pids[i], NULL, sizeof(cfg)));
		ASSERT_ESRCH(bts_req(PTRACE_BTS_CONFIG, pids[i], &cfg, 0));
		ASSERT_ESRCH(bts_req(PTRACE_BTS_STATUS, pids[i], &cfg, sizeof(cfg)));
		ASSERT_ESRCH(bts_req(PTRACE_BTS_STATUS, pids[i], NULL, 1));
		ASSERT_ESRCH(bts_req(PTRACE_BTS_SIZE, pids[i], NULL, 0));
		ASSERT_ESRCH(bts_req(PTRACE_BTS_SIZE, pids[i], NULL, 1));
		ASSERT_ESRCH(bts_req(PTRACE_BTS_GET, pids[i], &r, 0));
		ASSERT_ESRCH(bts_req(PTRACE_BTS_GET, pids[i], NULL, 100000));
		ASSERT_ESRCH(bts_req(PTRACE_BTS_CLEAR, pids[i], NULL, 0));
		ASSERT_ESRCH(bts_req(PTRACE_BTS_CLEAR, pids[i], &r, 1));
		ASSERT_ESRCH(bts_drain(pids[i], big, BIG_RECS));
		ASSERT_ESRCH(bts_drain(pids[i], NULL, 0));
	}
	kill(other, SIGKILL);
	waitpid(other, NULL, 0);

	ASSERT_EQ(0, kill(pid, SIGUSR1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_STOPSIG(SIGUSR1, status);
	ASSERT_TRUE(same_snapshot(pid, &snap));
	finish(pid);
}

#undef ASSERT_ESRCH

/*
 * PTRACE_BTS_SIZE and PTRACE_BTS_CLEAR: "addr and data must be 0",
 * EINVAL; PTRACE_BTS_GET: EINVAL where "data is not below the number of
 * records" (the whole unsigned long: no truncation), EFAULT, "The record
 * stays"; and a failing request changes nothing.
 */
TEST(size_clear_get_arguments)
{
	static struct snapshot snap;
	struct bts_struct r[2];
	void *ro;
	pid_t pid;

	if (!bts_available())
		SKIP(return, NO_BTS);
	pid = start_tracee(body_stops, 2, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_size(pid));
	ASSERT_ERRNO(EINVAL, bts_req(PTRACE_BTS_GET, pid, &r[0], 0));

	ASSERT_EQ(0, bts_config(pid, NREC(32), A | S, 0));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_EQ(0, bts_config(pid, 0, 0, 0));
	ASSERT_EQ(0, take_snapshot(pid, &snap));
	ASSERT_LT(1, snap.n);

	ASSERT_ERRNO(EINVAL, bts_req(PTRACE_BTS_SIZE, pid, &r[0], 0));
	ASSERT_ERRNO(EINVAL, bts_req(PTRACE_BTS_SIZE, pid, NULL, 1));
	ASSERT_ERRNO(EINVAL, bts_req(PTRACE_BTS_CLEAR, pid, &r[0], 0));
	ASSERT_ERRNO(EINVAL, bts_req(PTRACE_BTS_CLEAR, pid, NULL, 1));
	ASSERT_ERRNO(EINVAL, bts_req(PTRACE_BTS_CLEAR, pid, NULL, ~0UL));
	ASSERT_TRUE(same_snapshot(pid, &snap));

	ASSERT_ERRNO(EINVAL, bts_req(PTRACE_BTS_GET, pid, &r[0], snap.n));
	ASSERT_ERRNO(EINVAL, bts_req(PTRACE_BTS_GET, pid, &r[0], ~0UL));
	ASSERT_ERRNO(EINVAL, bts_req(PTRACE_BTS_GET, pid, &r[0], LONG_MAX));
	if (sizeof(long) == 8) {
		/* 1 << 32 and (1 << 32) + 1 are not indexes 0 and 1. */
		ASSERT_ERRNO(EINVAL, bts_req(PTRACE_BTS_GET, pid, &r[0],
					     (unsigned long)(1ULL << 32)));
		ASSERT_ERRNO(EINVAL, bts_req(PTRACE_BTS_GET, pid, &r[0],
					     (unsigned long)((1ULL << 32) + 1)));
	}

	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(ro != MAP_FAILED);
	ASSERT_ERRNO(EFAULT, bts_req(PTRACE_BTS_GET, pid, ro, 0));
	ASSERT_ERRNO(EFAULT, bts_req(PTRACE_BTS_GET, pid, NULL, 0));
	munmap(ro, 4096);
	ASSERT_TRUE(same_snapshot(pid, &snap));

	/* The record stays: twice the same, newest first. */
	ASSERT_EQ(0, bts_req(PTRACE_BTS_GET, pid, &r[0], 0));
	ASSERT_EQ(0, bts_req(PTRACE_BTS_GET, pid, &r[1], 0));
	ASSERT_EQ(0, memcmp(&r[0], &r[1], REC));
	ASSERT_EQ(0, memcmp(&r[0], &snap.r[0], REC));
	ASSERT_EQ(snap.n, bts_size(pid));

	/* CLEAR with zeros empties, and only the records go. */
	ASSERT_EQ(0, bts_req(PTRACE_BTS_CLEAR, pid, NULL, 0));
	ASSERT_EQ(0, bts_size(pid));
	ASSERT_ERRNO(EINVAL, bts_req(PTRACE_BTS_GET, pid, &r[0], 0));
	ASSERT_EQ(0, bts_status(pid, &snap.st));
	EXPECT_EQ(NREC(32), snap.st.size);
	finish(pid);
}

/*
 * PTRACE_BTS_CONFIG ESRCH: "PTRACE_BTS_O_TRACE or PTRACE_BTS_O_SCHED was
 * asked for a tracee stopped at PTRACE_EVENT_EXIT ... At that stop the
 * records can still be read, the recording goes on as it is, and recording
 * can be stopped and the buffer freed"; "A stop is a departure".
 */
TEST(exit_stop)
{
	int sig = SIGRTMIN + 6, status, bts = bts_trace_errno();
	static struct snapshot snap;
	struct ptrace_bts_config st;
	struct bts_struct d[64];
	pid_t pid;
	long i;

	if (!bts_available())
		SKIP(return, NO_BTS);
	pid = start_tracee(body_naps_exit, 2, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_req(PTRACE_SETOPTIONS, pid, NULL, PTRACE_O_TRACEEXIT));
	ASSERT_EQ(0, bts_config(pid, NREC(64), A | S | G, sig));
	status = resume(pid, 0);
	ASSERT_STOPSIG(SIGTRAP, status);
	ASSERT_EQ(PTRACE_EVENT_EXIT, status >> 16);

	ASSERT_EQ(0, take_snapshot(pid, &snap));
	ASSERT_LT(0, snap.n);
	EXPECT_EQ((__u32)BTS_TASK_DEPARTS, snap.r[0].qualifier) TH_LOG("a stop is a departure");

	/* Asked for, even as it is, O_SCHED and O_TRACE fail. */
	ASSERT_ERRNO(ESRCH, bts_config(pid, 0, S | G, sig));
	ASSERT_ERRNO(ESRCH, bts_config(pid, NREC(64), S | G, sig));
	ASSERT_ERRNO(ESRCH, bts_config(pid, 0, S, 0));
	ASSERT_ERRNO(ESRCH, bts_config(pid, NREC(8), A | S, 0));
	if (!bts) {
		ASSERT_ERRNO(ESRCH, bts_config(pid, 0, T | S | G, sig));
		ASSERT_ERRNO(ESRCH, bts_config(pid, 0, T, 0));
	}
	ASSERT_TRUE(same_snapshot(pid, &snap));

	/* The records can be read; recording stopped; the buffer freed. */
	ASSERT_EQ(snap.n, bts_drain(pid, d, 64));
	for (i = 0; i < snap.n; i++)
		ASSERT_EQ(0, memcmp(&d[i], &snap.r[snap.n - 1 - i], REC));
	ASSERT_SCHED(d, snap.n, pid);
	ASSERT_EQ(0, bts_config(pid, 0, G, sig));
	ASSERT_EQ(0, bts_status(pid, &st));
	EXPECT_EQ((__u32)G, st.flags);
	ASSERT_EQ(0, bts_config(pid, 0, 0, 0));
	ASSERT_EQ(0, bts_config(pid, 0, A, 0));
	ASSERT_EQ(0, bts_status(pid, &st));
	EXPECT_EQ(0U, st.size);
	EXPECT_EQ(0U, st.flags);

	ASSERT_EQ(0, bts_req(PTRACE_CONT, pid, NULL, 0));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
}

/*
 * ESRCH at the exit stop: "The kernel knows the stop by its siginfo: a
 * tracer that rewrote it with PTRACE_SETSIGINFO may find PTRACE_EVENT_EXIT
 * taken for another stop, or another stop for it, and gets (or escapes)
 * this ESRCH accordingly; the tracee exits all the same."
 */
TEST(exit_stop_by_siginfo)
{
	siginfo_t si, si0;
	int status;
	pid_t pid;

	if (!bts_available())
		SKIP(return, NO_BTS);

	/* A SIGSTOP stop dressed as the exit stop. */
	pid = start_tracee(body_stops, 2, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_req(PTRACE_GETSIGINFO, pid, NULL, (unsigned long)&si0));
	si = si0;
	si.si_signo = SIGTRAP;
	si.si_code = SIGTRAP | (PTRACE_EVENT_EXIT << 8);
	ASSERT_EQ(0, bts_req(PTRACE_SETSIGINFO, pid, NULL, (unsigned long)&si));
	ASSERT_ERRNO(ESRCH, bts_config(pid, NREC(8), A | S, 0));
	ASSERT_EQ(0, bts_size(pid));
	ASSERT_EQ(0, bts_req(PTRACE_SETSIGINFO, pid, NULL, (unsigned long)&si0));
	ASSERT_EQ(0, bts_config(pid, NREC(8), A | S, 0));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_LT(0, bts_size(pid));
	finish(pid);

	/* The exit stop dressed as another: configured, it exits all the same. */
	pid = start_tracee(body_naps_exit, 2, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_req(PTRACE_SETOPTIONS, pid, NULL, PTRACE_O_TRACEEXIT));
	status = resume(pid, 0);
	ASSERT_STOPSIG(SIGTRAP, status);
	ASSERT_EQ(PTRACE_EVENT_EXIT, status >> 16);
	ASSERT_ERRNO(ESRCH, bts_config(pid, NREC(8), A | S, 0));
	ASSERT_EQ(0, bts_req(PTRACE_GETSIGINFO, pid, NULL, (unsigned long)&si));
	si.si_code = SI_USER;
	ASSERT_EQ(0, bts_req(PTRACE_SETSIGINFO, pid, NULL, (unsigned long)&si));
	ASSERT_EQ(0, bts_config(pid, NREC(8), A | S | G, SIGUSR1));
	ASSERT_EQ(0, bts_req(PTRACE_CONT, pid, NULL, 0));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("status %#x", status);
	ASSERT_EQ(0, WEXITSTATUS(status));
}

/*
 * The charge against RLIMIT_MEMLOCK is "charged to the tracer's user,
 * whichever of the user's processes holds it"; it "is given back when the
 * buffer is freed ..., when the tracer detaches, when the tracee exits,
 * and soon after the tracer exits without detaching (before any later
 * PTRACE_BTS_CONFIG goes on)".  128 records take at least 3 KiB and at
 * most a page: two do not fit in a page.
 */
TEST(memlock_charge_lifetime)
{
	struct rlimit rl = { .rlim_cur = 4096, .rlim_max = 4096 };
	int up[2], down[2], status;
	pid_t a, b, c, tracer;
	char ok = 0;

	if (geteuid())
		SKIP(return, "needs root to become an unprivileged user");
	if (!bts_available())
		SKIP(return, NO_BTS);
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	ASSERT_EQ(0, setgid(TEST_UID));
	ASSERT_EQ(0, setuid(TEST_UID));
	ASSERT_EQ(0, prctl(PR_SET_DUMPABLE, 1));
	a = start_tracee(body_pause, 0, 0, true);
	b = start_tracee(body_pause, 0, 0, true);
	ASSERT_LT(0, a);
	ASSERT_LT(0, b);

	ASSERT_EQ(0, bts_config(a, NREC(128), A | S, 0));
	ASSERT_ERRNO(ENOMEM, bts_config(b, NREC(128), A | S, 0));
	ASSERT_EQ(0, bts_config(a, 0, A, 0));				/* freed */
	ASSERT_EQ(0, bts_config(b, NREC(128), A | S, 0));
	ASSERT_ERRNO(ENOMEM, bts_config(a, NREC(128), A | S, 0));
	ASSERT_EQ(0, bts_req(PTRACE_DETACH, b, NULL, 0));		/* detached */
	ASSERT_EQ(0, bts_config(a, NREC(128), A | S, 0));
	kill(b, SIGKILL);
	waitpid(b, NULL, 0);

	b = start_tracee(body_pause, 0, 0, true);
	ASSERT_LT(0, b);
	ASSERT_ERRNO(ENOMEM, bts_config(b, NREC(128), A | S, 0));
	finish(a);							/* exited */
	ASSERT_EQ(0, bts_config(b, NREC(128), A | S, 0));
	ASSERT_EQ(0, bts_config(b, 0, A, 0));

	/* Another process of the user holds it, then exits without detaching. */
	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	tracer = fork();
	ASSERT_LE(0, tracer);
	if (!tracer) {
		/* Let a failing test end it: EOF on @down, or its death. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(up[0]);
		close(down[1]);
		c = start_tracee(body_pause, 0, 0, false);
		ok = c > 0 && !bts_config(c, NREC(128), A | S, 0);
		if (write(up[1], &c, sizeof(c)) != sizeof(c) ||
		    write(up[1], &ok, 1) != 1 || read(down[0], &ok, 1) != 1)
			_exit(2);
		_exit(0);
	}
	close(down[0]);
	ASSERT_EQ((ssize_t)sizeof(c), read(up[0], &c, sizeof(c)));
	ASSERT_EQ(1, read(up[0], &ok, 1));
	ASSERT_TRUE(ok) TH_LOG("the other tracer could not configure");
	ASSERT_ERRNO(ENOMEM, bts_config(b, NREC(128), A | S, 0));
	ASSERT_EQ(1, write(down[1], &ok, 1));
	ASSERT_EQ(tracer, waitpid(tracer, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, bts_config(b, NREC(128), A | S, 0)) TH_LOG("errno %d", errno);
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	finish(b);
}

/*
 * "CAP_IPC_LOCK locks without a limit"; a size of PTRACE_BTS_SIZE_MAX is
 * "at most PTRACE_BTS_SIZE_MAX"; any "valid signal other than SIGKILL and
 * SIGSTOP" (SIGRTMAX, SIGCONT); "flags 0" needs no buffer.
 */
TEST(config_limits)
{
	struct rlimit rl = { .rlim_cur = 0, .rlim_max = RLIM_INFINITY };
	struct ptrace_bts_config st;
	pid_t pid;

	if (geteuid())
		SKIP(return, "needs root for CAP_IPC_LOCK");
	if (!bts_available())
		SKIP(return, NO_BTS);
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	pid = start_tracee(body_stops, 2, 0, true);
	ASSERT_LT(0, pid);

	ASSERT_EQ(0, bts_config(pid, 0, 0, 0));
	ASSERT_EQ(0, bts_status(pid, &st));
	EXPECT_EQ(0U, st.size);
	EXPECT_EQ(0U, st.flags);

	ASSERT_EQ(0, bts_config(pid, PTRACE_BTS_SIZE_MAX, A | S, 0)) TH_LOG("errno %d", errno);
	ASSERT_EQ(0, bts_status(pid, &st));
	EXPECT_EQ(PTRACE_BTS_SIZE_MAX, st.size);
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_LT(0, bts_size(pid));
	ASSERT_EQ(0, bts_config(pid, PTRACE_BTS_SIZE_MAX, S | G, SIGRTMAX));
	ASSERT_EQ(0, bts_status(pid, &st));
	EXPECT_EQ((__u32)SIGRTMAX, st.signal);
	ASSERT_EQ(0, bts_config(pid, 0, S | G, SIGCONT));
	ASSERT_EQ(0, bts_config(pid, 0, S | G, 1));
	ASSERT_EQ(0, bts_config(pid, NREC(1), A | S, 0));
	ASSERT_EQ(0, bts_status(pid, &st));
	EXPECT_EQ(NREC(1), st.size);
	ASSERT_EQ(0, bts_size(pid));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_EQ(1, bts_size(pid));
	finish(pid);
}

static void setup_no_sigpending(void)
{
	struct rlimit rl = { 0, 0 };

	if (setrlimit(RLIMIT_SIGPENDING, &rl) || setgid(TEST_UID + 1) ||
	    setuid(TEST_UID + 1))
		_exit(92);
}

/*
 * "The kernel sets that instance aside when PTRACE_BTS_O_SIGNAL is first
 * configured, so it never lacks the memory to send it, and it counts among
 * the tracee's user's pending signals (without being refused for
 * RLIMIT_SIGPENDING) while the trace exists": a real-time overflow signal
 * reaches a tracee whose user may queue none, /proc's SigQ counts it once,
 * and it no longer counts once the tracer detached.
 */
TEST(sigpending_reserved)
{
	int sig = SIGRTMIN + 5, i, status = 0;
	struct bts_struct d[8];
	siginfo_t si;
	pid_t pid;

	if (geteuid())
		SKIP(return, "needs root to run the tracee as another user");
	if (!bts_available())
		SKIP(return, NO_BTS);
	tracee_setup = setup_no_sigpending;
	pid = start_tracee(body_stops, NAPS, 0, true);
	tracee_setup = NULL;
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, proc_status(pid, "SigQ:", false));

	ASSERT_EQ(0, bts_config(pid, NREC(8), A | S | G, sig));
	ASSERT_EQ(1, proc_status(pid, "SigQ:", false));
	ASSERT_EQ(0, bts_config(pid, NREC(8), A | S | G, sig));
	ASSERT_EQ(1, proc_status(pid, "SigQ:", false));

	ASSERT_STOPSIG(sig, resume(pid, 0));
	ASSERT_EQ(0, bts_req(PTRACE_GETSIGINFO, pid, NULL, (unsigned long)&si));
	EXPECT_EQ(SI_KERNEL, si.si_code);
	ASSERT_EQ(8, bts_drain(pid, d, 8));
	for (i = 0; i < 4; i++) {
		status = resume(pid, 0);
		if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGSTOP)
			break;
	}
	ASSERT_STOPSIG(sig, status);
	ASSERT_EQ(1, proc_status(pid, "SigQ:", false));

	ASSERT_EQ(0, bts_req(PTRACE_DETACH, pid, NULL, 0));
	ASSERT_EQ(0, proc_status(pid, "SigQ:", false));
	finish(pid);
}

/* The tracer inside the namespace: 0, or the step that failed. */
static int trace_in_namespace(void)
{
	struct bts_struct d[64];
	int status;
	pid_t pid;
	long n;

	pid = start_tracee(body_stops, 2, 0, true);
	if (pid < 0)
		return 2;
	if (bts_config(pid, NREC(64), A | S, 0))
		return 3;
	status = resume(pid, 0);
	if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGSTOP)
		return 4;
	n = bts_drain(pid, d, 64);
	if (n <= 0)
		return 5;
	if (check_sched(d, n, pid))
		return 6;
	finish(pid);
	return 0;
}

/*
 * "pid is the tracee's thread id in the tracer's pid namespace": a tracer
 * outside the tracee's namespace sees its pid there, a tracer inside it
 * the pid inside.
 */
TEST(pid_namespace)
{
	struct bts_struct d[64];
	int go[2], status;
	pid_t init, pid;
	char c = 0;
	long n;

	if (geteuid())
		SKIP(return, "needs root for a pid namespace");
	if (!bts_available())
		SKIP(return, NO_BTS);
	if (unshare(CLONE_NEWPID))
		SKIP(return, "no pid namespaces (CONFIG_PID_NS): %s", strerror(errno));
	ASSERT_EQ(0, pipe(go));
	init = fork();
	ASSERT_LE(0, init);
	if (!init) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (read(go[0], &c, 1) != 1)
			_exit(7);
		_exit(trace_in_namespace());
	}

	pid = start_tracee(body_stops, 2, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(2, proc_status(pid, "NSpid:", true));
	ASSERT_EQ(0, bts_config(pid, NREC(64), A | S, 0));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	n = bts_drain(pid, d, 64);
	ASSERT_LT(0, n);
	ASSERT_SCHED(d, n, pid);
	finish(pid);

	ASSERT_EQ(1, write(go[1], &c, 1));
	ASSERT_EQ(init, waitpid(init, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status)) TH_LOG("inside, step %d failed", WEXITSTATUS(status));
}

static char other_path[256];

static void body_exec_other(long arg)
{
	static const char * const envp[] = { TRACEE_ENV "=1", NULL };

	(void)arg;
	execle(other_path, "ptrace_bts_doc", (char *)NULL, envp);
	_exit(91);
}

/*
 * "The structures have fixed-size fields and one layout for 64-bit, x32
 * and ia32 tracers; a 32-bit tracer passes the same arguments": a tracer
 * of one width traces the test program of the other width through exec
 * ("exec keeps the configuration") to its exit stop; with BTS, the
 * branches of a 64-bit tracee above 4 GiB reach a 32-bit tracer whole.
 */
TEST(other_width_tracee)
{
	long n, i, execs = 0, calls = 0, rets = 0, branches = 0, to_kernel = 0;
	int bts, status, bits = sizeof(long) == 8 ? 32 : 64;
	struct ptrace_bts_config st;
	__u32 flags = A | S;
	ssize_t len;
	pid_t pid;

	if (!bts_available())
		SKIP(return, NO_BTS);
	len = readlink("/proc/self/exe", other_path, sizeof(other_path) - 1);
	ASSERT_LT(3, len);
	other_path[len] = 0;
	if (strcmp(other_path + len - 3, sizeof(long) == 8 ? "_64" : "_32"))
		SKIP(return, "not named ..._32 or ..._64: %s", other_path);
	memcpy(other_path + len - 2, bits == 64 ? "64" : "32", 2);
	if (access(other_path, X_OK))
		SKIP(return, "no %s", other_path);
	bts = bts_trace_errno();
	if (!bts)
		flags |= T;

	pid = start_tracee(body_exec_other, 0, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_req(PTRACE_SETOPTIONS, pid, NULL,
			     PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT));
	ASSERT_EQ(0, bts_config(pid, NREC(BIG_RECS), flags, 0));
	status = resume(pid, 0);
	ASSERT_STOPSIG(SIGTRAP, status);
	ASSERT_EQ(PTRACE_EVENT_EXEC, status >> 16);
	ASSERT_EQ(0, bts_status(pid, &st));
	EXPECT_EQ(NREC(BIG_RECS), st.size);
	EXPECT_EQ(flags & ~A, st.flags);
	EXPECT_EQ(REC, st.bts_size);
	n = bts_drain(pid, big, BIG_RECS);
	ASSERT_LT(0, n);
	for (i = 0; i < n; i++)
		execs += big[i].qualifier == BTS_TASK_EXEC;
	ASSERT_EQ(1, execs);

	status = resume(pid, 0);
	ASSERT_STOPSIG(SIGTRAP, status);
	ASSERT_EQ(PTRACE_EVENT_EXIT, status >> 16);
	n = bts_drain(pid, big, BIG_RECS);
	ASSERT_LT(0, n);
	for (i = 0; i < n; i++) {
		if (big[i].qualifier != BTS_BRANCH) {
			ASSERT_SCHED(&big[i], 1, pid);
			continue;
		}
		ASSERT_TRUE(user_branch(&big[i], bits))
			TH_LOG("record %ld: %#llx -> %#llx", i,
			       (unsigned long long)big[i].from,
			       (unsigned long long)big[i].to);
		branches++;
		to_kernel += !big[i].to;
		/*
		 * An interrupt taken at the ret adds a branch from it to the
		 * kernel (to 0); the kernel's return to it (from 0), if
		 * recorded, is no call.
		 */
		calls += big[i].to == HIGH_CODE && big[i].from &&
			 big[i].from != HIGH_CODE;
		rets += big[i].from == HIGH_CODE && big[i].to &&
			big[i].to != HIGH_CODE;
	}
	if (flags & T) {
		ASSERT_LT(0, branches);
		ASSERT_LT(0, to_kernel);
		if (bits == 64) {
			ASSERT_EQ(1, calls) TH_LOG("the call to %#llx", HIGH_CODE);
			ASSERT_EQ(1, rets) TH_LOG("the return from %#llx", HIGH_CODE);
		}
	} else {
		ASSERT_EQ(0, branches);
	}
	ASSERT_EQ(0, bts_req(PTRACE_CONT, pid, NULL, 0));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	if (flags & T)
		return;
	SKIP(return, "switches only: the cpu has no BTS (errno %d)", bts);
}

/*
 * With both PTRACE_BTS_O_TRACE and PTRACE_BTS_O_SCHED: "A stop is a
 * departure; the first record after a tracee is resumed is its arrival";
 * the branches fall between an arrival and the next departure; "Fields a
 * record does not use are 0"; clock "monotonic on a cpu" (a run between an
 * arrival and a departure is on one cpu).
 */
TEST(switches_bracket_branches)
{
	const char *why;
	long n, i, branches = 0, runs = 0;
	struct ptrace_bts_config st;
	__u64 arrived = 0;
	bool in = false;
	pid_t pid;

	if (!bts_available())
		SKIP(return, NO_BTS);
	why = no_bts_trace();
	if (why)
		SKIP(return, "%s", why);
	pid = start_tracee(body_stops, 2, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_config(pid, NREC(BIG_RECS), A | T | S, 0));
	ASSERT_EQ(0, bts_status(pid, &st));
	EXPECT_EQ((__u32)(T | S), st.flags);
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	n = bts_drain(pid, big, BIG_RECS);
	ASSERT_LT(1, n);
	ASSERT_GT(BIG_RECS, n) TH_LOG("the buffer wrapped");
	EXPECT_EQ((__u32)BTS_TASK_ARRIVES, big[0].qualifier);
	EXPECT_EQ((__u32)BTS_TASK_DEPARTS, big[n - 1].qualifier);
	for (i = 0; i < n; i++) {
		switch (big[i].qualifier) {
		case BTS_BRANCH:
			ASSERT_TRUE(in) TH_LOG("record %ld: a branch while switched out", i);
			ASSERT_TRUE(user_branch(&big[i], sizeof(long) * 8));
			branches++;
			break;
		case BTS_TASK_ARRIVES:
			ASSERT_FALSE(in) TH_LOG("record %ld: arrives twice", i);
			ASSERT_SCHED(&big[i], 1, pid);
			arrived = big[i].clock;
			in = true;
			runs++;
			break;
		case BTS_TASK_DEPARTS:
			ASSERT_TRUE(in) TH_LOG("record %ld: departs twice", i);
			ASSERT_SCHED(&big[i], 1, pid);
			ASSERT_LE(arrived, big[i].clock);
			in = false;
			break;
		default:
			ASSERT_TRUE(0) TH_LOG("record %ld: qualifier %u", i, big[i].qualifier);
		}
	}
	ASSERT_LT(0, branches);
	ASSERT_LT(0, runs);
	finish(pid);
}

static int perf_bts_open(pid_t pid, int cpu)
{
	struct perf_event_attr pe;

	memset(&pe, 0, sizeof(pe));
	pe.type = PERF_TYPE_HARDWARE;
	pe.size = sizeof(pe);
	pe.config = PERF_COUNT_HW_BRANCH_INSTRUCTIONS;
	pe.sample_period = 1;
	pe.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_ADDR;
	pe.exclude_kernel = 1;
	pe.exclude_hv = 1;
	return syscall(SYS_perf_event_open, &pe, pid, cpu, -1, 0);
}

/* CONFIG with retries for a perf event whose release may lag its close. */
static long bts_config_retry(pid_t pid, __u32 size, __u32 flags)
{
	long ret;
	int i;

	for (i = 0; i < 200; i++) {
		ret = bts_config(pid, size, flags, 0);
		if (!ret || errno != EBUSY)
			break;
		usleep(10000);
	}
	return ret;
}

/*
 * EBUSY: "perf, or another user of the Debug Store arbiter, uses BTS or
 * traces the tracee" (perf's BTS event on the tracee, and on a cpu), and
 * nothing changed; "perf's users of BTS and these requests exclude each
 * other".
 */
TEST(ebusy_with_perf)
{
	const char *why;
	static struct snapshot snap;
	int fd, err;
	pid_t pid;

	if (!bts_available())
		SKIP(return, NO_BTS);
	why = no_bts_trace();
	if (why)
		SKIP(return, "%s", why);
	pid = start_tracee(body_stops, 2, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_config(pid, NREC(64), A | S, 0));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_EQ(0, take_snapshot(pid, &snap));

	fd = perf_bts_open(pid, -1);
	if (fd < 0) {
		err = errno;
		finish(pid);
		SKIP(return, "perf has no BTS event here: %s", strerror(err));
	}
	ASSERT_ERRNO(EBUSY, bts_config(pid, 0, T | S, 0));
	ASSERT_ERRNO(EBUSY, bts_config(pid, NREC(64), A | T | S, 0));
	ASSERT_TRUE(same_snapshot(pid, &snap));
	close(fd);
	ASSERT_EQ(0, bts_config_retry(pid, 0, T | S)) TH_LOG("errno %d", errno);

	/* And the other way round. */
	errno = 0;
	fd = perf_bts_open(pid, -1);
	EXPECT_GT(0, fd) TH_LOG("perf got BTS on a traced tracee");
	if (fd >= 0)
		close(fd);
	ASSERT_EQ(0, bts_config(pid, 0, S, 0));

	/* perf's BTS on a cpu. */
	fd = perf_bts_open(-1, 0);
	ASSERT_LE(0, fd) TH_LOG("a cpu's BTS event: %s", strerror(errno));
	ASSERT_EQ(0, take_snapshot(pid, &snap));
	ASSERT_ERRNO(EBUSY, bts_config(pid, 0, T | S, 0));
	ASSERT_TRUE(same_snapshot(pid, &snap));
	close(fd);
	ASSERT_EQ(0, bts_config_retry(pid, 0, T | S));
	finish(pid);
}

#define PARANOID "/proc/sys/kernel/perf_event_paranoid"

static int paranoid(int set)
{
	char buf[16];
	int fd, n;

	fd = open(PARANOID, set == INT_MIN ? O_RDONLY : O_WRONLY);
	if (fd < 0)
		return INT_MIN;
	if (set != INT_MIN) {
		n = snprintf(buf, sizeof(buf), "%d\n", set);
		n = write(fd, buf, n) == n ? set : INT_MIN;
	} else {
		n = read(fd, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = 0;
		n = n > 0 ? atoi(buf) : INT_MIN;
	}
	close(fd);
	return n;
}

/*
 * An unprivileged tracer: 0, or the step that failed.  With @refused,
 * O_TRACE must fail with EACCES, changing nothing; else its branches must
 * show no kernel address.
 */
static int unprivileged_trace(bool refused)
{
	struct rlimit rl = { .rlim_cur = 4 << 20, .rlim_max = 4 << 20 };
	static struct snapshot snap;
	long n, i, to_kernel = 0;
	pid_t pid;

	if (setrlimit(RLIMIT_MEMLOCK, &rl) || setgid(TEST_UID) || setuid(TEST_UID))
		return 2;
	prctl(PR_SET_DUMPABLE, 1);
	pid = start_tracee(body_stops, 2, 0, true);
	if (pid < 0)
		return 3;
	/* "Whoever may attach ... may configure a buffer, switch records ..." */
	if (bts_config(pid, NREC(BIG_RECS / 2), A | S | G, SIGUSR1))
		return 4;
	if (refused) {
		if (take_snapshot(pid, &snap))
			return 5;
		if (!bts_config(pid, 0, T | S | G, SIGUSR1) || errno != EACCES)
			return 6;
		if (!bts_config(pid, NREC(8), A | T, 0) || errno != EACCES)
			return 7;
		if (!same_snapshot(pid, &snap))
			return 8;
		return 0;
	}
	if (bts_config(pid, NREC(BIG_RECS / 2), A | T, 0))
		return 9;
	if (resume(pid, 0) != 0x137f)
		return 10;
	n = bts_drain(pid, big, BIG_RECS);
	if (n <= 0)
		return 11;
	for (i = 0; i < n; i++) {
		if (!user_branch(&big[i], sizeof(long) * 8))
			return 12;
		to_kernel += !big[i].to;
	}
	return to_kernel ? 0 : 13;
}

static int run_unprivileged(bool refused)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid)
		_exit(unprivileged_trace(refused));
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}

/*
 * Privilege: O_TRACE "is allowed where perf_event_open() would let the
 * tracer open a user-mode branch event on the tracee ...: not with a
 * perf_event_paranoid above 2 ... without CAP_SYS_ADMIN" (EACCES, nothing
 * changed); the other requests are allowed to whoever may attach; and
 * "kernel addresses are removed before records are copied out, so a
 * tracer learns nothing of the kernel, whatever its privilege".
 */
TEST(eacces_paranoid)
{
	const char *why;
	int old, at3, at2, root3;

	if (geteuid())
		SKIP(return, "needs root to set " PARANOID);
	if (!bts_available())
		SKIP(return, NO_BTS);
	why = no_bts_trace();
	if (why)
		SKIP(return, "%s", why);
	old = paranoid(INT_MIN);
	if (old == INT_MIN || paranoid(3) != 3)
		SKIP(return, "cannot set " PARANOID);
	at3 = run_unprivileged(true);
	root3 = bts_trace_errno();
	paranoid(2);
	at2 = run_unprivileged(false);
	paranoid(old);
	ASSERT_EQ(0, at3) TH_LOG("paranoid 3, unprivileged: step %d failed", at3);
	ASSERT_EQ(0, root3) TH_LOG("paranoid 3, root: errno %d", root3);
	ASSERT_EQ(0, at2) TH_LOG("paranoid 2, unprivileged: step %d failed", at2);
}

/* Count the branches and the switch records of @n records. */
static void count_kinds(const struct bts_struct *r, long n, long *branches, long *switches)
{
	long i;

	*branches = 0;
	*switches = 0;
	for (i = 0; i < n; i++) {
		if (r[i].qualifier == BTS_BRANCH)
			(*branches)++;
		else
			(*switches)++;
	}
}

/*
 * "The flags replace the previous ones": O_TRACE and O_SCHED on and off
 * again, without a new buffer ("size must be 0 or the current size, and
 * the buffer and its records stay").
 */
TEST(flags_replace_branches)
{
	static const __u32 steps[] = { T | S, S, T | S, T, 0, T | S };
	long n, br, sw, kept;
	const char *why;
	unsigned int i;
	pid_t pid;

	if (!bts_available())
		SKIP(return, NO_BTS);
	why = no_bts_trace();
	if (why)
		SKIP(return, "%s", why);
	pid = start_tracee(body_stops, 2, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_config(pid, NREC(BIG_RECS), A, 0));
	for (i = 0; i < ARRAY_SIZE(steps); i++) {
		kept = bts_size(pid);
		ASSERT_EQ(0, bts_config(pid, i & 1 ? NREC(BIG_RECS) : 0, steps[i], 0));
		ASSERT_EQ(kept, bts_size(pid)) TH_LOG("step %u", i);
		ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
		n = bts_drain(pid, big, BIG_RECS);
		ASSERT_LE(0, n);
		ASSERT_GT(BIG_RECS, n);
		count_kinds(big, n, &br, &sw);
		ASSERT_EQ(!!(steps[i] & T), !!br) TH_LOG("step %u: %ld branches", i, br);
		ASSERT_EQ(!!(steps[i] & S), !!sw) TH_LOG("step %u: %ld switches", i, sw);
	}
	finish(pid);
}

/* 20000 branches at its start, none elsewhere; never inlined. */
static __attribute__((noipa)) void marker_loop(void)
{
	int i;

	for (i = 0; i < 20000; i++)
		asm volatile("" : : : "memory");
}

static void *marker_thread(void *arg)
{
	marker_loop();
	return arg;
}

enum kin { KIN_SELF, KIN_FORK, KIN_THREAD };

/* The tracee's body: @arg says who runs the marker loop. */
static void body_kin(long arg)
{
	pthread_t th;
	pid_t child;

	switch (arg) {
	case KIN_SELF:
		marker_loop();
		break;
	case KIN_FORK:
		child = fork();
		if (!child) {
			marker_loop();
			_exit(0);
		}
		waitpid(child, NULL, 0);
		break;
	case KIN_THREAD:
		if (!pthread_create(&th, NULL, marker_thread, NULL))
			pthread_join(th, NULL);
		break;
	}
	raise(SIGSTOP);
	body_pause(0);
}

static void body_marks(long arg)
{
	(void)arg;
	for (;;) {
		marker_loop();
		raise(SIGSTOP);
	}
}

FIXTURE(kin) {};
FIXTURE_SETUP(kin) {}
FIXTURE_TEARDOWN(kin) {}
FIXTURE_VARIANT(kin) {
	enum kin who;
};

FIXTURE_VARIANT_ADD(kin, self) { .who = KIN_SELF };
FIXTURE_VARIANT_ADD(kin, fork) { .who = KIN_FORK };
FIXTURE_VARIANT_ADD(kin, thread) { .who = KIN_THREAD };

/*
 * "A child of the tracee starts with nothing, whether or not it is
 * traced": the branches of a loop run by an untraced child process or
 * thread of the tracee are not in the tracee's buffer (and are, when the
 * tracee runs it itself); "pid is the tracee's thread id".
 */
TEST_F(kin, not_recorded)
{
	__u64 loop = (unsigned long)marker_loop;
	long n, i, marks = 0, branches = 0;
	const char *why;
	pid_t pid;

	if (!bts_available())
		SKIP(return, NO_BTS);
	why = no_bts_trace();
	if (why)
		SKIP(return, "%s", why);
	pid = start_tracee(body_kin, variant->who, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_config(pid, NREC(BIG_RECS), A | T | S, 0));
	ASSERT_STOPSIG(SIGSTOP, resume_past_sigchld(pid));
	n = bts_drain(pid, big, BIG_RECS);
	ASSERT_LT(0, n);
	ASSERT_GT(BIG_RECS, n);
	for (i = 0; i < n; i++) {
		if (big[i].qualifier != BTS_BRANCH) {
			ASSERT_SCHED(&big[i], 1, pid);
			continue;
		}
		branches++;
		marks += big[i].from >= loop && big[i].from < loop + 64;
	}
	ASSERT_LT(0, branches);
	ASSERT_EQ(variant->who == KIN_SELF, marks >= 19999) TH_LOG("%ld in the loop", marks);
	if (variant->who != KIN_SELF)
		ASSERT_EQ(0, marks);
	finish(pid);
}

/*
 * With PTRACE_BTS_O_TRACE, the linear buffer: "when it is full the tracee
 * gets the configured signal and further records are dropped until the
 * buffer is emptied"; the oldest record is the arrival after resuming.
 * The tracee runs 20000 branches between its stops.
 */
TEST(linear_overflow_branches)
{
	int sig = SIGRTMIN + 7;
	static struct snapshot snap;
	struct bts_struct d[64];
	const char *why;
	siginfo_t si;
	pid_t pid;

	if (!bts_available())
		SKIP(return, NO_BTS);
	why = no_bts_trace();
	if (why)
		SKIP(return, "%s", why);
	pid = start_tracee(body_marks, 0, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_config(pid, NREC(64), A | T | S | G, sig));
	ASSERT_STOPSIG(sig, resume(pid, 0));
	ASSERT_EQ(0, bts_req(PTRACE_GETSIGINFO, pid, NULL, (unsigned long)&si));
	EXPECT_EQ(SI_KERNEL, si.si_code);
	ASSERT_EQ(0, take_snapshot(pid, &snap));
	ASSERT_EQ(64, snap.n);
	EXPECT_EQ((__u32)BTS_TASK_ARRIVES, snap.r[63].qualifier);

	/* Not emptied: nothing is recorded or sent. */
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_TRUE(same_snapshot(pid, &snap));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_TRUE(same_snapshot(pid, &snap));

	ASSERT_EQ(64, bts_drain(pid, d, 64));
	ASSERT_STOPSIG(sig, resume(pid, 0));
	ASSERT_EQ(64, bts_size(pid));
	finish(pid);
}

/*
 * With O_TRACE, a circular buffer that wrapped: DRAIN "Copies every
 * record, oldest first", so each branch lands where the next one starts
 * (to <= next from, in straight-line code); the newest is the system call
 * that stopped the tracee, "to 0"; and a DRAIN that faults part way keeps
 * the records.
 */
TEST(wrapped_branch_order)
{
	static struct snapshot snap;
	struct bts_struct *d;
	const char *why;
	long i, n;
	char *map;
	pid_t pid;

	if (!bts_available())
		SKIP(return, NO_BTS);
	why = no_bts_trace();
	if (why)
		SKIP(return, "%s", why);
	pid = start_tracee(body_marks, 0, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_config(pid, NREC(MAX_RECS), A | T, 0));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_EQ(0, take_snapshot(pid, &snap));
	ASSERT_EQ(MAX_RECS, snap.n) TH_LOG("the buffer did not wrap");

	map = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(map != MAP_FAILED);
	ASSERT_EQ(0, mprotect(map + 4096, 4096, PROT_READ));
	d = (struct bts_struct *)(map + 4096 - 4 * REC);
	ASSERT_ERRNO(EFAULT, bts_drain(pid, d, MAX_RECS));
	ASSERT_TRUE(same_snapshot(pid, &snap));
	munmap(map, 8192);

	n = bts_drain(pid, big, MAX_RECS);
	ASSERT_EQ(MAX_RECS, n);
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, memcmp(&big[i], &snap.r[n - 1 - i], REC));
	for (i = 0; i + 1 < n; i++) {
		ASSERT_TRUE(user_branch(&big[i], sizeof(long) * 8));
		if (!big[i].to)
			continue;
		ASSERT_LE(big[i].to, big[i + 1].from)
			TH_LOG("record %ld: %#llx -> %#llx, then from %#llx", i,
			       (unsigned long long)big[i].from,
			       (unsigned long long)big[i].to,
			       (unsigned long long)big[i + 1].from);
		ASSERT_GT(big[i].to + (1 << 20), big[i + 1].from);
	}
	EXPECT_EQ(0ULL, big[n - 1].to) TH_LOG("the newest is not the stop's system call");
	finish(pid);
}

/*
 * "a larger structure ... is accepted if the bytes beyond are 0": the
 * last byte of a page-sized structure counts (E2BIG, nothing changed), and
 * a structure that ends where its mapping ends is read and written whole.
 */
TEST(config_tail_edges)
{
	long page = sysconf(_SC_PAGESIZE);
	static struct snapshot snap;
	struct ptrace_bts_config *c;
	unsigned char *map;
	pid_t pid;

	if (!bts_available())
		SKIP(return, NO_BTS);
	pid = start_tracee(body_stops, 2, 0, true);
	ASSERT_LT(0, pid);
	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(map != MAP_FAILED);
	ASSERT_EQ(0, munmap(map + page, page));

	c = (struct ptrace_bts_config *)map;
	c->size = NREC(8);
	c->flags = A | S;
	ASSERT_EQ(0, take_snapshot(pid, &snap));
	map[page - 1] = 1;
	ASSERT_ERRNO(E2BIG, bts_req(PTRACE_BTS_CONFIG, pid, c, page));
	ASSERT_TRUE(same_snapshot(pid, &snap));
	map[page - 1] = 0;
	ASSERT_EQ(0, bts_req(PTRACE_BTS_CONFIG, pid, c, page));
	ASSERT_ERRNO(EFAULT, bts_req(PTRACE_BTS_CONFIG, pid, map + 8, page));
	ASSERT_ERRNO(EFAULT, bts_req(PTRACE_BTS_STATUS, pid, map + 8, page));

	c = (struct ptrace_bts_config *)(map + page - sizeof(*c));
	c->size = NREC(16);
	c->flags = A | S;
	c->signal = 0;
	c->bts_size = 0;
	ASSERT_EQ(0, bts_req(PTRACE_BTS_CONFIG, pid, c, sizeof(*c)));
	memset(map, 0xa5, page);
	ASSERT_EQ(0, bts_req(PTRACE_BTS_STATUS, pid, c, sizeof(*c)));
	EXPECT_EQ(NREC(16), c->size);
	EXPECT_EQ((__u32)S, c->flags);
	EXPECT_EQ(REC, c->bts_size);
	ASSERT_EQ(0xa5, map[page - sizeof(*c) - 1]);
	munmap(map, page);
	finish(pid);
}

/* The tracer of release_at_once: trace @c's branches, then exit. */
static int trace_and_exit(pid_t *c)
{
	*c = start_tracee(body_marks, 0, 0, false);
	if (*c < 0)
		return 2;
	if (bts_config(*c, NREC(BIG_RECS), A | T | S, 0))
		return 3;
	if (resume(*c, 0) != 0x137f)
		return 4;
	return 0;
}

/*
 * "Detaching (PTRACE_DETACH) and the tracee's exit free the buffer and
 * stop recording at once": perf gets BTS for the tracee, and for a cpu,
 * right after; a tracer that exits without detaching takes its
 * configuration with it, and the next tracer records branches at once.
 */
TEST(release_at_once)
{
	int up[2], status, fd, tries;
	pid_t pid, tracer, c;
	const char *why;
	long ret;

	if (geteuid())
		SKIP(return, "needs root for perf's cpu events");
	if (!bts_available())
		SKIP(return, NO_BTS);
	why = no_bts_trace();
	if (why)
		SKIP(return, "%s", why);
	pid = start_tracee(body_marks, 0, 0, true);
	ASSERT_LT(0, pid);
	fd = perf_bts_open(pid, -1);
	if (fd < 0) {
		finish(pid);
		SKIP(return, "perf has no BTS event here");
	}
	close(fd);
	ASSERT_EQ(0, bts_config_retry(pid, NREC(BIG_RECS), A | T | S));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_LT(0, bts_size(pid));
	ASSERT_EQ(0, bts_req(PTRACE_DETACH, pid, NULL, 0));
	fd = perf_bts_open(pid, -1);
	ASSERT_LE(0, fd) TH_LOG("after PTRACE_DETACH: %s", strerror(errno));
	close(fd);
	finish(pid);

	pid = start_tracee(body_marks, 0, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_config_retry(pid, NREC(BIG_RECS), A | T | S));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	finish(pid);
	fd = perf_bts_open(-1, 0);
	ASSERT_LE(0, fd) TH_LOG("after the tracee's exit: %s", strerror(errno));
	close(fd);

	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	ASSERT_EQ(0, pipe(up));
	tracer = fork();
	ASSERT_LE(0, tracer);
	if (!tracer) {
		ret = trace_and_exit(&c);
		if (write(up[1], &c, sizeof(c)) != sizeof(c))
			_exit(5);
		_exit(ret);
	}
	ASSERT_EQ((ssize_t)sizeof(c), read(up[0], &c, sizeof(c)));
	ASSERT_EQ(tracer, waitpid(tracer, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status)) TH_LOG("the first tracer failed at step %d",
						 WEXITSTATUS(status));
	ASSERT_EQ(0, bts_req(PTRACE_SEIZE, c, NULL, 0));
	ASSERT_EQ(0, bts_req(PTRACE_INTERRUPT, c, NULL, 0));
	ASSERT_EQ(c, waitpid(c, &status, __WALL));
	for (tries = 0; tries < 200; tries++) {
		ret = bts_config(c, NREC(BIG_RECS), A | T | S, 0);
		if (!ret || errno != EBUSY)
			break;
		usleep(10000);
	}
	EXPECT_EQ(0, tries) TH_LOG("EBUSY %d times after the first tracer exited", tries);
	ASSERT_EQ(0, ret) TH_LOG("errno %d", errno);
	finish(c);
}

static void *trap_thread(void *arg)
{
	for (;;) {
		marker_loop();
		asm volatile("int3");
	}
	return arg;
}

static void body_trap_thread(long arg)
{
	pthread_t th;

	(void)arg;
	if (!pthread_create(&th, NULL, trap_thread, NULL))
		pthread_join(th, NULL);
	_exit(93);
}

/*
 * A thread is a tracee of its own: "pid is the tracee's thread id", its
 * branches are its own, and the thread it was cloned from "starts with
 * nothing" of it.
 */
TEST(thread_tracee)
{
	__u64 loop = (unsigned long)marker_loop;
	long n, i, marks = 0;
	struct ptrace_bts_config st;
	unsigned long msg;
	const char *why;
	pid_t pid, tid;
	int status;

	if (!bts_available())
		SKIP(return, NO_BTS);
	why = no_bts_trace();
	if (why)
		SKIP(return, "%s", why);
	pid = start_tracee(body_trap_thread, 0, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_req(PTRACE_SETOPTIONS, pid, NULL, PTRACE_O_TRACECLONE));
	status = resume(pid, 0);
	ASSERT_STOPSIG(SIGTRAP, status);
	ASSERT_EQ(PTRACE_EVENT_CLONE, status >> 16);
	ASSERT_EQ(0, bts_req(PTRACE_GETEVENTMSG, pid, NULL, (unsigned long)&msg));
	tid = msg;
	ASSERT_EQ(tid, waitpid(tid, &status, __WALL));
	ASSERT_EQ(0, bts_config(tid, NREC(BIG_RECS), A | T | S, 0));
	ASSERT_EQ(0, bts_req(PTRACE_CONT, pid, NULL, 0));

	ASSERT_STOPSIG(SIGTRAP, resume(tid, 0));
	n = bts_drain(tid, big, BIG_RECS);
	ASSERT_LT(0, n);
	ASSERT_GT(BIG_RECS, n);
	for (i = 0; i < n; i++) {
		if (big[i].qualifier != BTS_BRANCH) {
			ASSERT_SCHED(&big[i], 1, tid);
			continue;
		}
		marks += big[i].from >= loop && big[i].from < loop + 64;
	}
	ASSERT_LE(19999, marks);

	/* The leader, stopped, has nothing. */
	ASSERT_EQ(0, syscall(SYS_tgkill, pid, pid, SIGSTOP));
	ASSERT_EQ(pid, waitpid(pid, &status, __WALL));
	ASSERT_EQ(0, bts_status(pid, &st));
	EXPECT_EQ(0U, st.size);
	ASSERT_EQ(0, bts_size(pid));
	kill(pid, SIGKILL);
	/* The traced thread first: the leader waits for it. */
	waitpid(tid, NULL, __WALL);
	waitpid(pid, NULL, __WALL);
}

#ifndef PTRACE_SINGLEBLOCK
#define PTRACE_SINGLEBLOCK	33
#endif

FIXTURE(stepping) {};
FIXTURE_SETUP(stepping) {}
FIXTURE_TEARDOWN(stepping) {}
FIXTURE_VARIANT(stepping) {
	int request;
};

FIXTURE_VARIANT_ADD(stepping, singlestep) { .request = PTRACE_SINGLESTEP };
FIXTURE_VARIANT_ADD(stepping, singleblock) { .request = PTRACE_SINGLEBLOCK };

/*
 * Not a promise of ptrace-bts.rst but of ptrace(2), which it must not
 * break: stepping a tracee whose branches are recorded (O_TRACE) stops it
 * after each step, keeps the recording on, and leaves no stepping behind
 * once the tracee is continued.
 */
TEST_F(stepping, with_trace)
{
	__u64 loop = (unsigned long)marker_loop;
	long n, i, marks = 0;
	const char *why;
	int k, status;
	pid_t pid;

	if (!bts_available())
		SKIP(return, NO_BTS);
	why = no_bts_trace();
	if (why)
		SKIP(return, "%s", why);
	pid = start_tracee(body_marks, 0, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_config(pid, NREC(BIG_RECS), A | T | S, 0));
	for (k = 0; k < 20; k++) {
		ASSERT_EQ(0, bts_req(variant->request, pid, NULL, 0));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_STOPSIG(SIGTRAP, status);
	}
	ASSERT_EQ(0, bts_req(PTRACE_BTS_CLEAR, pid, NULL, 0));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	n = bts_drain(pid, big, BIG_RECS);
	ASSERT_LT(0, n);
	for (i = 0; i < n; i++)
		marks += big[i].qualifier == BTS_BRANCH &&
			 big[i].from >= loop && big[i].from < loop + 64;
	ASSERT_LE(19999, marks);
	finish(pid);
}

/*
 * PTRACE_BTS_DRAIN's errors are EIO, EFAULT, EINTR and ESRCH: "EIO data
 * is smaller than the records; nothing was copied", "EFAULT addr is not
 * writable; the records are kept (some may have been copied)", ESRCH for a
 * tracee not "attached to the calling thread" (another thread of the
 * tracer).  Anything else is no error: an unaligned array, a size that is
 * not a multiple of a record, a size beyond 32 bits, or any addr and data
 * when there are no records ("addr is not used then").
 */
struct drain_try {
	pid_t pid;
	long ret;
	int err;
};

static void *drain_in_thread(void *arg)
{
	struct drain_try *t = arg;

	errno = 0;
	t->ret = bts_drain(t->pid, big, BIG_RECS);
	t->err = errno;
	return NULL;
}

TEST(drain_errors)
{
	static const unsigned long small[] = { 0, 1, REC - 1, REC, 7 * REC, 8 * REC - 1 };
	long page = sysconf(_SC_PAGESIZE);
	static unsigned char raw[9 * REC + 8];
	static struct snapshot snap;
	struct bts_struct d[8];
	struct drain_try t;
	unsigned char *map;
	void *bad[4];
	pthread_t th;
	unsigned int i;
	pid_t pid;
	long j;

	if (!bts_available())
		SKIP(return, NO_BTS);
	pid = start_tracee(body_stops, NAPS, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_config(pid, NREC(8), A | S, 0));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_EQ(0, take_snapshot(pid, &snap));
	ASSERT_EQ(8, snap.n);

	for (i = 0; i < ARRAY_SIZE(small); i++) {
		memset(raw, 0x5a, sizeof(raw));
		ASSERT_ERRNO(EIO, bts_req(PTRACE_BTS_DRAIN, pid, raw + 1, small[i]));
		for (j = 0; j < (long)sizeof(raw); j++)
			ASSERT_EQ(0x5a, raw[j]) TH_LOG("data %lu: EIO copied", small[i]);
		ASSERT_TRUE(same_snapshot(pid, &snap)) TH_LOG("data %lu", small[i]);
	}

	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(map != MAP_FAILED);
	ASSERT_EQ(0, mprotect(map + page, page, PROT_READ));
	bad[0] = NULL;
	bad[1] = (void *)-4096L;		/* not a user address */
	bad[2] = map + page;			/* read-only */
	bad[3] = map + page - 3 * REC;		/* three records fit */
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ASSERT_ERRNO(EFAULT, bts_req(PTRACE_BTS_DRAIN, pid, bad[i], 8 * REC));
		ASSERT_TRUE(same_snapshot(pid, &snap)) TH_LOG("address %u", i);
	}
	munmap(map, 2 * page);

	t.pid = pid;
	ASSERT_EQ(0, pthread_create(&th, NULL, drain_in_thread, &t));
	ASSERT_EQ(0, pthread_join(th, NULL));
	ASSERT_EQ(-1, t.ret) TH_LOG("another thread of the tracer drained");
	ASSERT_EQ(ESRCH, t.err);
	ASSERT_TRUE(same_snapshot(pid, &snap));

	/* No error: an unaligned array of 8 records and 3 bytes. */
	memset(raw, 0x5a, sizeof(raw));
	ASSERT_EQ(8, bts_req(PTRACE_BTS_DRAIN, pid, raw + 1, 8 * REC + 3));
	memcpy(d, raw + 1, sizeof(d));
	for (j = 0; j < 8; j++)
		ASSERT_EQ(0, memcmp(&d[j], &snap.r[7 - j], REC)) TH_LOG("record %ld", j);
	ASSERT_EQ(0x5a, raw[1 + 8 * REC]);
	ASSERT_EQ(0, bts_size(pid));
	ASSERT_EQ(0, bts_req(PTRACE_BTS_DRAIN, pid, (void *)-4096L, 1));
	ASSERT_EQ(0, bts_req(PTRACE_BTS_DRAIN, pid, (void *)1, ~0UL));

	if (sizeof(long) == 8) {
		/* A size of 4 GiB is not one of 0. */
		ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
		ASSERT_EQ(8, bts_size(pid));
		ASSERT_EQ(8, bts_req(PTRACE_BTS_DRAIN, pid, d, (unsigned long)(1ULL << 32)))
			TH_LOG("errno %d", errno);
		ASSERT_SCHED(d, 8, pid);
	}
	finish(pid);
}

/* Helpers of the tests of traces left by a tracer that exited. */

#define PAGE		4096
#define PAGE_RECS	128	/* 128 records are charged one page */
#define NO_USERNS	99	/* the exit code of a tracer without one */
#define ORPHANS_MAX	4

/*
 * A tracer: @uid (0: as we are) with a RLIMIT_MEMLOCK of @memlock bytes,
 * in a new user namespace with @userns.
 */
struct who {
	uid_t uid;
	rlim_t memlock;
	bool userns;
};

/* Become @w: 0, 1, or NO_USERNS. */
static int become(const struct who *w)
{
	struct rlimit rl = { .rlim_cur = w->memlock, .rlim_max = w->memlock };

	if (w->uid) {
		if (setrlimit(RLIMIT_MEMLOCK, &rl) || setgroups(0, NULL) ||
		    setgid(w->uid) || setuid(w->uid))
			return 1;
		prctl(PR_SET_DUMPABLE, 1);
	}
	if (w->userns && unshare(CLONE_NEWUSER))
		return NO_USERNS;
	return 0;
}

/* The step a tracer process failed at, said with its errno. */
static int step_failed(int step)
{
	fprintf(stderr, "# step %d failed, errno %d (%s)\n", step, errno, strerror(errno));
	return step;
}

/*
 * Fork a tracer, @w, that gives each of @nr new tracees a buffer of @size
 * bytes with @flags and exits without detaching.  The tracees, whose pids
 * go to @pids, are reparented to us (a subreaper) and live on.  Returns 0,
 * the step at which the tracer failed, or NO_USERNS.
 */
static int make_orphans(const struct who *w, int nr, __u32 size, __u32 flags, pid_t *pids)
{
	ssize_t len = nr * sizeof(*pids), got = 0, n;
	int up[2], status, i, ret;
	pid_t tracer;

	for (i = 0; i < nr; i++)
		pids[i] = -1;
	if (nr > ORPHANS_MAX || prctl(PR_SET_CHILD_SUBREAPER, 1) || pipe(up))
		return 1;
	tracer = fork();
	if (tracer < 0)
		return 1;
	if (!tracer) {
		close(up[0]);
		ret = become(w);
		for (i = 0; !ret && i < nr; i++) {
			pids[i] = start_tracee(body_pause, 0, 0, false);
			if (pids[i] < 0)
				ret = step_failed(2);
			else if (bts_config(pids[i], size, flags, 0))
				ret = step_failed(3);
		}
		if (write(up[1], pids, len) != len)
			ret = 4;
		_exit(ret);
	}
	close(up[1]);
	while (got < len && (n = read(up[0], (char *)pids + got, len - got)) > 0)
		got += n;
	close(up[0]);
	if (waitpid(tracer, &status, 0) != tracer || !WIFEXITED(status))
		return 1;
	return got == len ? WEXITSTATUS(status) : 5;
}

static void reap(pid_t *pids, int nr)
{
	int i;

	for (i = 0; i < nr; i++) {
		if (pids[i] <= 0)
			continue;
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, __WALL);
		pids[i] = -1;
	}
}

/* Run @fn(@arg) in a new process that is @w; its pid. */
static pid_t spawn_as(const struct who *w, int (*fn)(long), long arg)
{
	pid_t pid = fork();
	int ret;

	if (!pid) {
		ret = become(w);
		_exit(ret ? ret : fn(arg));
	}
	return pid;
}

/* The exit code of @pid, 128 and the signal that killed it, or 1. */
static int exit_code(pid_t pid)
{
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 1;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int run_as(const struct who *w, int (*fn)(long), long arg)
{
	return exit_code(spawn_as(w, fn, arg));
}

static int do_nothing(long arg)
{
	return arg;
}

/* Configure a new tracee with a buffer charged @pages pages. */
static int need_pages(long pages)
{
	pid_t pid = start_tracee(body_pause, 0, 0, true);

	if (pid < 0)
		return step_failed(2);
	if (bts_config(pid, NREC(pages * PAGE_RECS), A | S, 0))
		return step_failed(3);
	return 0;
}

/* Trace @pid, stopped or running, and stop it: 0 or -1. */
static int seize_stop(pid_t pid)
{
	int status;

	if (bts_req(PTRACE_SEIZE, pid, NULL, 0) ||
	    bts_req(PTRACE_INTERRUPT, pid, NULL, 0))
		return -1;
	return waitpid(pid, &status, __WALL) == pid ? 0 : -1;
}

static bool has_flag(const char *line, const char *flag)
{
	size_t n = strlen(flag);
	const char *s;

	for (s = strstr(line, flag); s; s = strstr(s + 1, flag))
		if (s > line && s[-1] == ' ' && (s[n] == ' ' || s[n] == '\n' || !s[n]))
			return true;
	return false;
}

/* Why branches cannot be recorded here (the cpu's flags, errno), or NULL. */
static const char *bts_trace_skip(void)
{
	static char line[8192];
	bool found = false;
	FILE *f;

	f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return "no /proc/cpuinfo to look for the bts and dtes64 flags";
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "flags", 5);
	fclose(f);
	if (!found || !has_flag(line, "bts") || !has_flag(line, "dtes64"))
		return "the cpu has no bts and dtes64 flags in /proc/cpuinfo";
	return no_bts_trace();
}

struct relay {
	pid_t pid;
	__u32 flags;
};

/* A tracer that takes over the stopped tracee, configures it and exits. */
static int take_over(long arg)
{
	const struct relay *r = (const struct relay *)arg;

	if (seize_stop(r->pid))
		return step_failed(2);
	if (bts_config(r->pid, NREC(64), A | r->flags, 0))
		return step_failed(3);
	return 0;
}

FIXTURE(orphan_ebusy) {};
FIXTURE_SETUP(orphan_ebusy) {}
FIXTURE_TEARDOWN(orphan_ebusy) {}
FIXTURE_VARIANT(orphan_ebusy) {
	__u32 left;	/* the flags of the tracers that exited */
	__u32 next;	/* the flags of the next tracer */
};

FIXTURE_VARIANT_ADD(orphan_ebusy, sched_sched) { .left = S, .next = S };
FIXTURE_VARIANT_ADD(orphan_ebusy, trace_trace) { .left = T | S, .next = T | S };
FIXTURE_VARIANT_ADD(orphan_ebusy, trace_sched) { .left = T, .next = S };
FIXTURE_VARIANT_ADD(orphan_ebusy, sched_trace) { .left = S, .next = T };

/*
 * "A later PTRACE_BTS_CONFIG that would fail for want of what such traces
 * still hold frees the ones in its way and tries again: with EBUSY, the
 * traces of its tracee": three tracers in turn configure one tracee and
 * exit without detaching, each right after the one before, and a fourth,
 * at once, gets its configuration, never EBUSY; it sees nothing of theirs
 * ("A tracer never sees another tracer's records").
 */
TEST_F(orphan_ebusy, next_tracer_at_once)
{
	struct who root = { 0 };
	struct ptrace_bts_config st;
	struct relay r;
	const char *why;
	int round, k, ret;

	if (geteuid())
		SKIP(return, "needs root to trace a tracee that another tracer left");
	if (!bts_available())
		SKIP(return, NO_BTS);
	if ((variant->left | variant->next) & T) {
		why = bts_trace_skip();
		if (why)
			SKIP(return, "%s", why);
	}
	r.flags = variant->left;
	for (round = 0; round < 4; round++) {
		ret = make_orphans(&root, 1, NREC(64), A | variant->left, &r.pid);
		ASSERT_EQ(0, ret) TH_LOG("round %d: the first tracer failed at step %d",
					 round, ret);
		for (k = 2; k <= 3; k++) {
			ret = run_as(&root, take_over, (long)&r);
			ASSERT_EQ(0, ret) TH_LOG("round %d: tracer %d failed at step %d",
						 round, k, ret);
		}
		ASSERT_EQ(0, seize_stop(r.pid));
		ASSERT_EQ(0, bts_status(r.pid, &st));
		EXPECT_EQ(0U, st.size);
		EXPECT_EQ(0U, st.flags);
		ASSERT_EQ(0, bts_config(r.pid, NREC(64), A | variant->next, 0))
			TH_LOG("round %d: errno %d", round, errno);
		ASSERT_EQ(0, bts_status(r.pid, &st));
		EXPECT_EQ(NREC(64), st.size);
		EXPECT_EQ(variant->next, st.flags);
		finish(r.pid);
	}
}

/*
 * "with ENOMEM, the traces charged to a user that its own charge also
 * counts against": a tracer left three buffers that take the whole
 * RLIMIT_MEMLOCK of its user (three pages), and another process of the
 * user, at once, gets a buffer of three pages, so all three are freed.
 * From the second round on, the buffer of the last round's tracer, which
 * exited too, stands in the way of the first tracer.
 */
TEST(orphans_give_back_memlock)
{
	struct who w = { TEST_UID + 10, 3 * PAGE, false };
	pid_t o[ORPHANS_MAX];
	int round, ret;

	if (geteuid())
		SKIP(return, "needs root to become an unprivileged user");
	if (!bts_available())
		SKIP(return, NO_BTS);
	for (round = 0; round < 3; round++) {
		ret = make_orphans(&w, 3, NREC(PAGE_RECS), A | S, o);
		ASSERT_EQ(0, ret) TH_LOG("round %d: the first tracer failed at step %d",
					 round, ret);
		ret = run_as(&w, need_pages, 3);
		ASSERT_EQ(0, ret) TH_LOG("round %d: the next tracer failed at step %d",
					 round, ret);
		reap(o, 3);
	}
}

struct thread_trace {
	pid_t tid;
	pid_t tracee;
	int err;
};

static void *trace_and_leave(void *arg)
{
	struct thread_trace *t = arg;

	t->tid = syscall(SYS_gettid);
	t->tracee = start_tracee(body_pause, 0, 0, false);
	if (t->tracee < 0)
		t->err = errno ? errno : -1;
	else if (bts_config(t->tracee, NREC(PAGE_RECS), A | S, 0))
		t->err = errno;
	return NULL;
}

/* Wait until the thread @tid of ours has gone (its exit is complete). */
static int wait_thread_gone(pid_t tid)
{
	char path[64];
	int i;

	snprintf(path, sizeof(path), "/proc/self/task/%d", tid);
	for (i = 0; i < 10000; i++) {
		if (access(path, F_OK) && errno == ENOENT)
			return 0;
		usleep(1000);
	}
	return -1;
}

/*
 * The process of orphan_of_tracer_thread: a thread traces, configures a
 * buffer of a page, all of RLIMIT_MEMLOCK, and exits; then the main thread
 * needs that page.
 */
static int thread_leaves_trace(long rounds)
{
	struct thread_trace t;
	pthread_t th;
	pid_t pid;
	long i;

	for (i = 0; i < rounds; i++) {
		memset(&t, 0, sizeof(t));
		if (pthread_create(&th, NULL, trace_and_leave, &t) ||
		    pthread_join(th, NULL))
			return step_failed(2);
		errno = t.err;
		if (t.err)
			return step_failed(3);
		if (wait_thread_gone(t.tid))
			return step_failed(4);
		pid = start_tracee(body_pause, 0, 0, true);
		if (pid < 0)
			return step_failed(5);
		if (bts_config(pid, NREC(PAGE_RECS), A | S, 0))
			return step_failed(6);
		finish(pid);
		finish(t.tracee);
	}
	return 0;
}

/*
 * A tracer thread that exits while its process goes on is "a tracer that
 * exits without detaching" ("A configuration belongs to the ptrace link
 * ... between the tracer thread that made it and the tracee"): another
 * thread of its user, at once, gets the allowance its buffer held.
 */
TEST(orphan_of_tracer_thread)
{
	struct who w = { TEST_UID + 11, PAGE, false };
	int ret;

	if (geteuid())
		SKIP(return, "needs root to become an unprivileged user");
	if (!bts_available())
		SKIP(return, NO_BTS);
	ret = run_as(&w, thread_leaves_trace, 3);
	ASSERT_EQ(0, ret) TH_LOG("failed at step %d", ret);
}

/*
 * "traces left after it failed are not its business", and it fails all
 * the same: with a RLIMIT_MEMLOCK of two pages, one held by a live trace
 * and one by a trace an exited tracer left, a buffer of two pages fails
 * with ENOMEM (changing nothing), one of a page then succeeds, and a
 * third fails.  "A new buffer is charged before the old one is given
 * back": a reallocation of a page beside a left trace succeeds too, and
 * then a page, not two, is left for a last buffer.
 */
TEST(orphans_not_enough)
{
	struct who w = { TEST_UID + 12, 2 * PAGE, false }, same = { 0 };
	struct ptrace_bts_config st;
	pid_t a, b, c, o;
	int ret;

	if (geteuid())
		SKIP(return, "needs root to become an unprivileged user");
	if (!bts_available())
		SKIP(return, NO_BTS);
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	ASSERT_EQ(0, become(&w));
	a = start_tracee(body_stops, 2, 0, true);
	b = start_tracee(body_pause, 0, 0, true);
	c = start_tracee(body_pause, 0, 0, true);
	ASSERT_LT(0, a);
	ASSERT_LT(0, b);
	ASSERT_LT(0, c);
	ASSERT_EQ(0, bts_config(a, NREC(PAGE_RECS), A | S, 0));
	ret = make_orphans(&same, 1, NREC(PAGE_RECS), A | S, &o);
	ASSERT_EQ(0, ret) TH_LOG("the tracer failed at step %d", ret);

	ASSERT_ERRNO(ENOMEM, bts_config(b, NREC(2 * PAGE_RECS), A | S, 0));
	ASSERT_EQ(0, bts_status(b, &st));
	EXPECT_EQ(0U, st.size);
	EXPECT_EQ(0U, st.flags);
	ASSERT_EQ(0, bts_config(b, NREC(PAGE_RECS), A | S, 0)) TH_LOG("errno %d", errno);
	ASSERT_ERRNO(ENOMEM, bts_config(c, NREC(PAGE_RECS), A | S, 0));
	reap(&o, 1);

	/* A reallocation of a's page, beside a page left by a tracer. */
	ASSERT_EQ(0, bts_config(b, 0, A, 0));
	ret = make_orphans(&same, 1, NREC(PAGE_RECS), A | S, &o);
	ASSERT_EQ(0, ret) TH_LOG("the second tracer failed at step %d", ret);
	ASSERT_EQ(0, bts_config(a, NREC(PAGE_RECS), A | S, 0)) TH_LOG("errno %d", errno);
	ASSERT_STOPSIG(SIGSTOP, resume(a, 0));
	ASSERT_LT(0, bts_size(a));

	/* a holds one page now: its old one, and the left one, are gone. */
	ASSERT_ERRNO(ENOMEM, bts_config(c, NREC(2 * PAGE_RECS), A | S, 0));
	ASSERT_EQ(0, bts_config(c, NREC(PAGE_RECS), A | S, 0)) TH_LOG("errno %d", errno);
	finish(c);
	finish(b);
	finish(a);
	reap(&o, 1);
}

/* A tracer at its RLIMIT_MEMLOCK of a page beside another user's traces. */
static int enomem_beside_others(long arg)
{
	pid_t a, b;
	int i;

	(void)arg;
	a = start_tracee(body_pause, 0, 0, true);
	b = start_tracee(body_pause, 0, 0, true);
	if (a < 0 || b < 0)
		return step_failed(2);
	if (bts_config(a, NREC(PAGE_RECS), A | S, 0))
		return step_failed(3);
	for (i = 0; i < 3; i++) {
		errno = 0;
		if (!bts_config(b, NREC(PAGE_RECS), A | S, 0) || errno != ENOMEM)
			return step_failed(4);
	}
	if (bts_config(a, 0, A, 0))
		return step_failed(5);
	if (bts_config(b, NREC(PAGE_RECS), A | S, 0))
		return step_failed(6);
	return 0;
}

/*
 * "with ENOMEM, the traces charged to a user that its own charge also
 * counts against ... It frees them one at a time and waits for no other
 * trace": traces another user's tracer left do not count against a user,
 * whose CONFIG over its own RLIMIT_MEMLOCK returns ENOMEM (and does not
 * hang) while they exist; the other user, next, gets its allowance back.
 */
TEST(orphans_of_another_user)
{
	struct who other = { TEST_UID + 13, 4 * PAGE, false };
	struct who user = { TEST_UID + 14, PAGE, false };
	pid_t o[ORPHANS_MAX], p[ORPHANS_MAX];
	int ret;

	if (geteuid())
		SKIP(return, "needs root to become unprivileged users");
	if (!bts_available())
		SKIP(return, NO_BTS);
	ret = make_orphans(&other, 4, NREC(PAGE_RECS), A | S, o);
	ASSERT_EQ(0, ret) TH_LOG("the other user's tracer failed at step %d", ret);
	ret = run_as(&user, enomem_beside_others, 0);
	ASSERT_EQ(0, ret) TH_LOG("the user's tracer failed at step %d", ret);
	ret = make_orphans(&other, 4, NREC(PAGE_RECS), A | S, p);
	ASSERT_EQ(0, ret) TH_LOG("the other user's next tracer failed at step %d", ret);
	reap(o, 4);
	reap(p, 4);
}

FIXTURE(orphan_userns) {};
FIXTURE_SETUP(orphan_userns) {}
FIXTURE_TEARDOWN(orphan_userns) {}
FIXTURE_VARIANT(orphan_userns) {
	bool left_inside;	/* the exited tracer was in the namespace */
};

FIXTURE_VARIANT_ADD(orphan_userns, left_inside) { .left_inside = true };
FIXTURE_VARIANT_ADD(orphan_userns, next_inside) { .left_inside = false };

/*
 * "the traces charged to a user that its own charge also counts against
 * (a charge counts against the user in its user namespace and against the
 * owner of each namespace up to the initial one)": a buffer of a page,
 * all of RLIMIT_MEMLOCK, left by a tracer in a user namespace owned by a
 * user is in the way of that user outside, and one left outside is in the
 * way of a tracer in a namespace the user owns; the next tracer gets its
 * page at once.
 */
TEST_F(orphan_userns, owner_charge)
{
	struct who in = { TEST_UID + 15, PAGE, true };
	struct who out = { TEST_UID + 15, PAGE, false };
	int round, ret;
	pid_t o;

	if (geteuid())
		SKIP(return, "needs root to become an unprivileged user");
	if (!bts_available())
		SKIP(return, NO_BTS);
	ret = run_as(&in, do_nothing, 0);
	if (ret == NO_USERNS)
		SKIP(return, "no user namespace: unprivileged unshare(CLONE_NEWUSER) fails");
	ASSERT_EQ(0, ret);
	for (round = 0; round < 3; round++) {
		ret = make_orphans(variant->left_inside ? &in : &out, 1,
				   NREC(PAGE_RECS), A | S, &o);
		ASSERT_EQ(0, ret) TH_LOG("round %d: the first tracer failed at step %d",
					 round, ret);
		ret = run_as(variant->left_inside ? &out : &in, need_pages, 1);
		ASSERT_EQ(0, ret) TH_LOG("round %d: the next tracer failed at step %d",
					 round, ret);
		reap(&o, 1);
	}
}

struct race {
	int go[2], up[2], done[2];
};

/* Configure a page at the moment @arg says, report, hold it till told. */
static int racer(long arg)
{
	struct race *r = (struct race *)arg;
	int err = 0;
	pid_t pid;
	char c;

	close(r->go[1]);
	close(r->up[0]);
	close(r->done[1]);
	pid = start_tracee(body_pause, 0, 0, true);
	if (pid < 0)
		return step_failed(2);
	if (write(r->up[1], &err, sizeof(err)) != sizeof(err) ||
	    read(r->go[0], &c, 1) != 0)
		return step_failed(3);
	if (bts_config(pid, NREC(PAGE_RECS), A | S, 0))
		err = errno ? errno : -1;
	if (write(r->up[1], &err, sizeof(err)) != sizeof(err) ||
	    read(r->done[0], &c, 1) != 0)
		return step_failed(4);
	return 0;
}

/*
 * "It frees them one at a time and waits for no other trace but one being
 * given back at the same moment": two processes of a user whose
 * RLIMIT_MEMLOCK of two pages is held by two buffers an exited tracer
 * left each ask for a page at the same moment, and both get it.
 */
TEST(orphans_two_at_once)
{
	struct who w = { TEST_UID + 16, 2 * PAGE, false };
	pid_t o[ORPHANS_MAX], racers[2];
	int round, ret, i, err;
	struct race r;

	if (geteuid())
		SKIP(return, "needs root to become an unprivileged user");
	if (!bts_available())
		SKIP(return, NO_BTS);
	for (round = 0; round < 3; round++) {
		ret = make_orphans(&w, 2, NREC(PAGE_RECS), A | S, o);
		ASSERT_EQ(0, ret) TH_LOG("round %d: the first tracer failed at step %d",
					 round, ret);
		ASSERT_EQ(0, pipe(r.go));
		ASSERT_EQ(0, pipe(r.up));
		ASSERT_EQ(0, pipe(r.done));
		for (i = 0; i < 2; i++) {
			racers[i] = spawn_as(&w, racer, (long)&r);
			ASSERT_LT(0, racers[i]);
		}
		close(r.go[0]);
		close(r.up[1]);
		close(r.done[0]);
		for (i = 0; i < 2; i++)
			ASSERT_EQ((ssize_t)sizeof(err), read(r.up[0], &err, sizeof(err)))
				TH_LOG("round %d: a racer is not ready", round);
		close(r.go[1]);
		for (i = 0; i < 2; i++) {
			ASSERT_EQ((ssize_t)sizeof(err), read(r.up[0], &err, sizeof(err)));
			EXPECT_EQ(0, err) TH_LOG("round %d: a racer's CONFIG failed, errno %d",
						 round, err);
		}
		close(r.done[1]);
		close(r.up[0]);
		for (i = 0; i < 2; i++) {
			ret = exit_code(racers[i]);
			ASSERT_EQ(0, ret) TH_LOG("round %d: a racer failed at step %d",
						 round, ret);
		}
		reap(o, 2);
	}
}

/* Helpers of the tests of PTRACE_BTS_O_LOSSLESS, lost and BTS_LOST. */

#define LOSS		PTRACE_BTS_O_LOSSLESS
#define LOOP_EDGES	19999	/* the taken back edges of bts_doc_loop() */
#define LONG_NAPS	300	/* usleep()s of lossless_switches' tracee */

static_assert(sizeof(struct bts_struct) == 32, "struct bts_struct is 32 bytes");
static_assert(sizeof(struct ptrace_bts_config) == PTRACE_BTS_CONFIG_SIZE_VER1,
	      "struct ptrace_bts_config is PTRACE_BTS_CONFIG_SIZE_VER1 bytes");
static_assert(offsetof(struct ptrace_bts_config, lost) ==
	      PTRACE_BTS_CONFIG_SIZE_VER0, "lost follows the first structure");

/*
 * A loop of 20000 iterations at known addresses, the same in a forked
 * tracee: each taken jnz is a branch from bts_doc_loop_jnz to
 * bts_doc_loop_back, 19999 of them.
 */
asm(".pushsection .text\n"
	".globl bts_doc_loop\n"
	".type bts_doc_loop, @function\n"
	"bts_doc_loop:\n"
#ifdef __x86_64__
	"	movl %edi, %ecx\n"
#else
	"	movl 4(%esp), %ecx\n"
#endif
	".globl bts_doc_loop_back\n"
	"bts_doc_loop_back:\n"
	"	decl %ecx\n"
	".globl bts_doc_loop_jnz\n"
	"bts_doc_loop_jnz:\n"
	"	jnz bts_doc_loop_back\n"
	"	ret\n"
	".size bts_doc_loop, .-bts_doc_loop\n"
	".popsection\n");

/* bts_doc_loop(@n), called through its address: it has no C prototype. */
static void bts_doc_loop_run(unsigned int n)
{
	void (*loop)(unsigned int n);

#ifdef __x86_64__
	asm("lea bts_doc_loop(%%rip), %0" : "=r" (loop));
#else
	asm("mov $bts_doc_loop, %0" : "=r" (loop));
#endif
	loop(n);
}

/* The addresses of the labels in bts_doc_loop(). */
static void bts_doc_loop_labels(__u64 *jnz, __u64 *back)
{
	unsigned long j, b;

#ifdef __x86_64__
	asm("lea bts_doc_loop_jnz(%%rip), %0\n\t"
	    "lea bts_doc_loop_back(%%rip), %1"
	    : "=r" (j), "=r" (b));
#else
	asm("mov $bts_doc_loop_jnz, %0\n\t"
	    "mov $bts_doc_loop_back, %1"
	    : "=r" (j), "=r" (b));
#endif
	*jnz = j;
	*back = b;
}

static void body_doc_loop(long arg)
{
	(void)arg;
	bts_doc_loop_run(LOOP_EDGES + 1);
	raise(SIGSTOP);
	body_pause(0);
}

/* Whether @pid is in the signal-delivery-stop of its overflow signal @sig. */
static bool overflow_stop(pid_t pid, int sig)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	return !bts_req(PTRACE_GETSIGINFO, pid, NULL, (unsigned long)&si) &&
	       si.si_signo == sig && si.si_code == SI_KERNEL &&
	       si.si_errno == PTRACE_BTS_SI_ERRNO;
}

/* STATUS's lost, or -1. */
static long long bts_lost(pid_t pid)
{
	struct ptrace_bts_config st;

	if (bts_status(pid, &st))
		return -1;
	return st.lost;
}

/*
 * The reserve of a lossless buffer of @recs records: "an eighth of it
 * (from 8 to 256 records)".
 */
static long lossless_reserve(long recs)
{
	long r = recs / 8;

	return r < 8 ? 8 : r > 256 ? 256 : r;
}

/*
 * "PTRACE_BTS_O_LOSSLESS without PTRACE_BTS_O_SIGNAL or with a buffer of
 * fewer than PTRACE_BTS_LOSSLESS_MIN_SIZE bytes" is EINVAL, and "On an
 * error nothing changed"; "the buffer must have at least
 * PTRACE_BTS_LOSSLESS_MIN_SIZE bytes (16 records)" (the header: "The
 * smallest buffer PTRACE_BTS_O_LOSSLESS takes: 16 records", so 16 are
 * accepted), for a new buffer and for one kept; STATUS gives "the flags
 * in effect (without PTRACE_BTS_O_ALLOC)".
 */
TEST(lossless_config_rules)
{
	const __u32 min = PTRACE_BTS_LOSSLESS_MIN_SIZE;
	int sig = SIGRTMIN + 8;
	static struct snapshot snap;
	struct ptrace_bts_config st;
	pid_t pid;

	ASSERT_EQ(NREC(16), min);
	if (!bts_available())
		SKIP(return, NO_BTS);
	pid = start_tracee(body_stops, 2, 0, true);
	ASSERT_LT(0, pid);

	/* A new buffer. */
	ASSERT_ERRNO(EINVAL, bts_config(pid, min, A | S | LOSS, 0));
	ASSERT_ERRNO(EINVAL, bts_config(pid, min, A | LOSS, 0));
	ASSERT_ERRNO(EINVAL, bts_config(pid, min - REC, A | S | G | LOSS, sig));
	ASSERT_ERRNO(EINVAL, bts_config(pid, min - REC, A | G | LOSS, sig));
	ASSERT_ERRNO(EINVAL, bts_config(pid, NREC(8), A | S | G | LOSS, sig));
	ASSERT_ERRNO(EINVAL, bts_config(pid, NREC(2), A | S | G | LOSS, sig));
	ASSERT_ERRNO(EINVAL, bts_config(pid, NREC(1), A | G | LOSS, sig));
	ASSERT_EQ(0, bts_status(pid, &st));
	EXPECT_EQ(0U, st.size);
	EXPECT_EQ(0U, st.flags);
	ASSERT_EQ(0, bts_config(pid, min, A | S | G | LOSS, sig)) TH_LOG("errno %d", errno);
	ASSERT_EQ(0, bts_status(pid, &st));
	EXPECT_EQ(min, st.size);
	EXPECT_EQ((__u32)(S | G | LOSS), st.flags);
	EXPECT_EQ((__u32)sig, st.signal);
	ASSERT_EQ(0, bts_config(pid, NREC(64), A | G | LOSS, sig)) TH_LOG("errno %d", errno);
	ASSERT_EQ(0, bts_status(pid, &st));
	EXPECT_EQ(NREC(64), st.size);
	EXPECT_EQ((__u32)(G | LOSS), st.flags);

	/* The buffer kept: 15 records, then 16, without O_SIGNAL. */
	ASSERT_EQ(0, bts_config(pid, min - REC, A | S, 0));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_EQ(0, take_snapshot(pid, &snap));
	ASSERT_LT(0, snap.n);
	ASSERT_ERRNO(EINVAL, bts_config(pid, 0, S | G | LOSS, sig));
	ASSERT_ERRNO(EINVAL, bts_config(pid, min - REC, S | G | LOSS, sig));
	ASSERT_ERRNO(EINVAL, bts_config(pid, 0, G | LOSS, sig));
	ASSERT_TRUE(same_snapshot(pid, &snap));

	ASSERT_EQ(0, bts_config(pid, min, A | S, 0));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_EQ(0, take_snapshot(pid, &snap));
	ASSERT_LT(0, snap.n);
	ASSERT_ERRNO(EINVAL, bts_config(pid, 0, S | LOSS, 0));
	ASSERT_ERRNO(EINVAL, bts_config(pid, 0, LOSS, 0));
	ASSERT_ERRNO(EINVAL, bts_config(pid, min, S | LOSS, sig));
	/* An unknown flag is still one. */
	ASSERT_ERRNO(EINVAL, bts_config(pid, 0, S | G | LOSS | 0x20, sig));
	ASSERT_EQ(0, PTRACE_BTS_O_ALL & 0x20);
	ASSERT_TRUE(same_snapshot(pid, &snap));

	ASSERT_EQ(0, bts_config(pid, 0, S | G | LOSS, sig)) TH_LOG("errno %d", errno);
	ASSERT_EQ(0, bts_status(pid, &st));
	EXPECT_EQ(min, st.size);
	EXPECT_EQ((__u32)(S | G | LOSS), st.flags);
	finish(pid);
}

/*
 * PTRACE_BTS_CONFIG: "at least PTRACE_BTS_CONFIG_SIZE_VER0 (16 bytes, the
 * structure without lost)" is accepted, whatever follows those bytes;
 * "lost is ignored, as size and bts_size may be: what PTRACE_BTS_STATUS
 * returned can be passed back" (the header: "ignored by
 * PTRACE_BTS_CONFIG"): a new buffer starts with lost 0 whatever lost
 * said, and STATUS's output of a full linear buffer, lost included,
 * configured again, changes nothing STATUS or the records show.
 */
TEST(config_ver0_and_lost)
{
	static struct snapshot snap;
	struct ptrace_bts_config cfg, st, st2;
	unsigned char raw[PTRACE_BTS_CONFIG_SIZE_VER1];
	const __u64 losts[] = { 0, 1, 1ULL << 40, ~0ULL };
	unsigned int i;
	pid_t pid;

	if (!bts_available())
		SKIP(return, NO_BTS);
	pid = start_tracee(body_stops, NAPS, 0, true);
	ASSERT_LT(0, pid);

	/* A new buffer: lost is not taken. */
	memset(&cfg, 0, sizeof(cfg));
	cfg.size = NREC(16);
	cfg.flags = A | S;
	cfg.lost = 1;
	ASSERT_EQ(0, bts_req(PTRACE_BTS_CONFIG, pid, &cfg, sizeof(cfg))) TH_LOG("errno %d", errno);
	ASSERT_EQ(0, bts_status(pid, &st));
	EXPECT_EQ(NREC(16), st.size);
	EXPECT_EQ((__u32)S, st.flags);
	EXPECT_EQ(0ULL, st.lost);

	/* The 16 bytes alone, whatever follows them. */
	cfg.size = NREC(8);
	cfg.flags = A | S | G;
	cfg.signal = SIGUSR2;
	memcpy(raw, &cfg, sizeof(raw));
	memset(raw + PTRACE_BTS_CONFIG_SIZE_VER0, 0xff,
	       sizeof(raw) - PTRACE_BTS_CONFIG_SIZE_VER0);
	ASSERT_EQ(0, bts_req(PTRACE_BTS_CONFIG, pid, raw, PTRACE_BTS_CONFIG_SIZE_VER0))
		TH_LOG("errno %d", errno);
	ASSERT_EQ(0, bts_status(pid, &st));
	EXPECT_EQ(NREC(8), st.size);
	EXPECT_EQ((__u32)(S | G), st.flags);
	EXPECT_EQ((__u32)SIGUSR2, st.signal);
	EXPECT_EQ(0ULL, st.lost);

	/* Full and linear, the tracee run on: lost counts. */
	ASSERT_STOPSIG(SIGUSR2, resume(pid, 0));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_EQ(0, take_snapshot(pid, &snap));
	ASSERT_EQ(8, snap.n);
	ASSERT_EQ(0, bts_status(pid, &st));
	ASSERT_LT(0ULL, st.lost) TH_LOG("nothing counted lost");

	/* STATUS passed back as it is, then with other counts. */
	for (i = 0; i < ARRAY_SIZE(losts) + 1; i++) {
		cfg = st;
		if (i)
			cfg.lost = losts[i - 1];
		ASSERT_EQ(0, bts_req(PTRACE_BTS_CONFIG, pid, &cfg, sizeof(cfg)))
			TH_LOG("lost %llu: errno %d", (unsigned long long)cfg.lost, errno);
		ASSERT_EQ(0, bts_status(pid, &st2));
		ASSERT_EQ(0, memcmp(&st, &st2, sizeof(st)))
			TH_LOG("lost %llu given: STATUS lost %llu, was %llu",
			       (unsigned long long)cfg.lost,
			       (unsigned long long)st2.lost, (unsigned long long)st.lost);
		ASSERT_TRUE(same_snapshot(pid, &snap));
	}
	cfg = st;
	cfg.lost = 7;
	ASSERT_EQ(0, bts_req(PTRACE_BTS_CONFIG, pid, &cfg, PTRACE_BTS_CONFIG_SIZE_VER1));
	ASSERT_EQ(0, bts_status(pid, &st2));
	ASSERT_EQ(st.lost, st2.lost);
	ASSERT_TRUE(same_snapshot(pid, &snap));
	finish(pid);
}

/*
 * PTRACE_BTS_STATUS writes lost "if data has room for it
 * (PTRACE_BTS_CONFIG_SIZE_VER1)": "the records dropped since the buffer
 * was last emptied because it was linear and full (a circular buffer
 * overwrites, and loses none)"; a 16-byte STATUS writes 16 bytes; DRAIN:
 * "lost goes back to 0", and so after CLEAR (which empties the buffer);
 * without PTRACE_BTS_O_LOSSLESS no BTS_LOST record ("only with
 * PTRACE_BTS_O_LOSSLESS").
 */
TEST(status_lost)
{
	unsigned char raw[PTRACE_BTS_CONFIG_SIZE_VER1 + 8];
	struct ptrace_bts_config *st = (struct ptrace_bts_config *)raw;
	static struct snapshot snap;
	struct bts_struct d[8];
	long long lost;
	pid_t pid;
	int i;

	if (!bts_available())
		SKIP(return, NO_BTS);
	pid = start_tracee(body_stops, NAPS, 0, true);
	ASSERT_LT(0, pid);

	/* Circular, full twice over: none lost. */
	ASSERT_EQ(0, bts_config(pid, NREC(8), A | S, 0));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_EQ(8, bts_size(pid));
	ASSERT_EQ(0, bts_lost(pid));

	/* Linear: full, the tracee resumed without draining. */
	ASSERT_EQ(0, bts_config(pid, NREC(8), A | S | G, SIGUSR2));
	ASSERT_STOPSIG(SIGUSR2, resume(pid, 0));
	ASSERT_EQ(8, bts_size(pid));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_EQ(8, bts_size(pid));

	memset(raw, 0x5a, sizeof(raw));
	ASSERT_EQ(0, bts_req(PTRACE_BTS_STATUS, pid, raw, PTRACE_BTS_CONFIG_SIZE_VER0));
	EXPECT_EQ(NREC(8), st->size);
	EXPECT_EQ((__u32)(S | G), st->flags);
	EXPECT_EQ((__u32)SIGUSR2, st->signal);
	EXPECT_EQ(REC, st->bts_size);
	for (i = PTRACE_BTS_CONFIG_SIZE_VER0; i < (int)sizeof(raw); i++)
		ASSERT_EQ(0x5a, raw[i]) TH_LOG("a 16-byte STATUS wrote byte %d", i);

	memset(raw, 0x5a, sizeof(raw));
	ASSERT_EQ(0, bts_req(PTRACE_BTS_STATUS, pid, raw, PTRACE_BTS_CONFIG_SIZE_VER1));
	EXPECT_EQ(NREC(8), st->size);
	memcpy(&lost, &raw[PTRACE_BTS_CONFIG_SIZE_VER0], sizeof(lost));
	ASSERT_LT(0, lost) TH_LOG("nothing counted lost");
	ASSERT_GT(1000000, lost);
	for (i = PTRACE_BTS_CONFIG_SIZE_VER1; i < (int)sizeof(raw); i++)
		ASSERT_EQ(0x5a, raw[i]) TH_LOG("STATUS wrote byte %d", i);

	ASSERT_EQ(0, take_snapshot(pid, &snap));
	ASSERT_EQ(8, snap.n);
	ASSERT_SCHED(snap.r, 8, pid);	/* no BTS_LOST */
	ASSERT_EQ(8, bts_drain(pid, d, 8));
	ASSERT_SCHED(d, 8, pid);
	ASSERT_EQ(0, bts_lost(pid)) TH_LOG("lost after DRAIN");

	/* Again, emptied by CLEAR. */
	ASSERT_STOPSIG(SIGUSR2, resume(pid, 0));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_LT(0, bts_lost(pid));
	ASSERT_EQ(0, bts_req(PTRACE_BTS_CLEAR, pid, NULL, 0));
	ASSERT_EQ(0, bts_size(pid));
	ASSERT_EQ(0, bts_lost(pid)) TH_LOG("lost after CLEAR");
	finish(pid);
}

/* Queue @arg to itself twice, with the overflow signal's siginfo. */
static void body_forge(long arg)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_signo = arg;
	si.si_code = SI_KERNEL;
	si.si_errno = PTRACE_BTS_SI_ERRNO;
	si.si_pid = getpid();
	si.si_uid = MARK_UID;
	if (syscall(SYS_rt_sigqueueinfo, getpid(), arg, &si))
		_exit(92);
	if (syscall(SYS_rt_tgsigqueueinfo, getpid(), syscall(SYS_gettid), arg, &si))
		_exit(93);
	raise(SIGSTOP);
	body_pause(0);
}

/*
 * "The overflow signal: ... Its siginfo says so: si_code SI_KERNEL and
 * si_errno PTRACE_BTS_SI_ERRNO (ENOBUFS) ...; a tracer reads it with
 * PTRACE_GETSIGINFO at the signal-delivery-stop.  (A thread of the
 * tracee's own process can queue such a siginfo with rt_sigqueueinfo(2)
 * or rt_tgsigqueueinfo(2), and the tracer itself can write one with
 * PTRACE_SETSIGINFO; no other process can.)"  With and without
 * PTRACE_BTS_O_LOSSLESS; the tracer is such an other process.
 */
TEST(overflow_siginfo_identity)
{
	int sig = SIGRTMIN + 13, i;
	siginfo_t si;
	int lossless;
	pid_t pid;

	ASSERT_EQ(ENOBUFS, PTRACE_BTS_SI_ERRNO);
	if (!bts_available())
		SKIP(return, NO_BTS);
	for (lossless = 0; lossless < 2; lossless++) {
		pid = start_tracee(body_stops, NAPS, 0, true);
		ASSERT_LT(0, pid);
		ASSERT_EQ(0, bts_config(pid, lossless ? PTRACE_BTS_LOSSLESS_MIN_SIZE : NREC(8),
					A | S | G | (lossless ? LOSS : 0), SIGUSR2));
		ASSERT_STOPSIG(SIGUSR2, resume(pid, 0));
		memset(&si, 0, sizeof(si));
		ASSERT_EQ(0, bts_req(PTRACE_GETSIGINFO, pid, NULL, (unsigned long)&si));
		EXPECT_EQ(SIGUSR2, si.si_signo);
		EXPECT_EQ(SI_KERNEL, si.si_code) TH_LOG("lossless %d", lossless);
		EXPECT_EQ(PTRACE_BTS_SI_ERRNO, si.si_errno) TH_LOG("lossless %d", lossless);

		/* No other process queues such a siginfo to it. */
		memset(&si, 0, sizeof(si));
		si.si_signo = SIGUSR2;
		si.si_code = SI_KERNEL;
		si.si_errno = PTRACE_BTS_SI_ERRNO;
		ASSERT_ERRNO(EPERM, syscall(SYS_rt_sigqueueinfo, pid, SIGUSR2, &si));
		ASSERT_ERRNO(EPERM, syscall(SYS_rt_tgsigqueueinfo, pid, pid, SIGUSR2, &si));
		finish(pid);
	}

	/* The tracee's own thread queues it, twice: two such stops. */
	pid = start_tracee(body_forge, sig, 0, true);
	ASSERT_LT(0, pid);
	for (i = 0; i < 2; i++) {
		ASSERT_STOPSIG(sig, resume(pid, 0));
		ASSERT_TRUE(overflow_stop(pid, sig)) TH_LOG("queued instance %d", i);
	}
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));

	/* The tracer writes one over its SIGSTOP. */
	memset(&si, 0, sizeof(si));
	si.si_signo = sig;
	si.si_code = SI_KERNEL;
	si.si_errno = PTRACE_BTS_SI_ERRNO;
	ASSERT_EQ(0, bts_req(PTRACE_SETSIGINFO, pid, NULL, (unsigned long)&si));
	ASSERT_TRUE(overflow_stop(pid, sig));
	finish(pid);
}

/*
 * PTRACE_BTS_O_LOSSLESS: "the signal comes while the buffer still has
 * room, so that a tracer that drains the buffer at each overflow stop gets
 * every record"; "the overflow signal (SI_KERNEL, PTRACE_BTS_SI_ERRNO)
 * means drain, keep the records, and resume the thread with signal 0".
 * Branches: all 19999 back edges of a loop of 20000 iterations through a
 * buffer of 64 records, no BTS_LOST record and lost 0 at each stop; and
 * through one of 4096, whose reserve is capped.  "The signal is sent while
 * the buffer has a reserve left, an eighth of it (from 8 to 256 records)":
 * not before the buffer is down to its reserve (and the slot "kept for a
 * BTS_LOST record"), so each overflow stop finds at least that many
 * records, and at most all but that last slot.
 */
TEST(lossless_every_branch)
{
	int sig = SIGRTMIN + 9, status, stops;
	const long sizes[] = { 64, 4096 };
	long n, i, edges, recs;
	__u64 from, to;
	unsigned int s;
	long long lost;
	const char *why;
	pid_t pid;

	bts_doc_loop_labels(&from, &to);
	if (!bts_available())
		SKIP(return, NO_BTS);
	why = no_bts_trace();
	if (why)
		SKIP(return, "%s", why);
	for (s = 0; s < ARRAY_SIZE(sizes); s++) {
		recs = sizes[s];
		stops = 0;
		edges = 0;
		pid = start_tracee(body_doc_loop, 0, 0, true);
		ASSERT_LT(0, pid);
		ASSERT_EQ(0, bts_config(pid, NREC(recs), A | T | G | LOSS, sig));
		for (;;) {
			status = resume(pid, 0);
			ASSERT_TRUE(WIFSTOPPED(status)) TH_LOG("status %#x", status);
			lost = bts_lost(pid);
			ASSERT_EQ(0, lost) TH_LOG("%ld records, stop %d: %lld lost",
						  recs, stops, lost);
			n = bts_drain(pid, big, recs);
			ASSERT_LE(0, n);
			for (i = 0; i < n; i++) {
				ASSERT_EQ((__u32)BTS_BRANCH, big[i].qualifier)
					TH_LOG("%ld records, stop %d, record %ld: qualifier %u",
					       recs, stops, i, big[i].qualifier);
				edges += big[i].from == from && big[i].to == to;
			}
			if (WSTOPSIG(status) != sig)
				break;
			ASSERT_TRUE(overflow_stop(pid, sig)) TH_LOG("stop %d", stops);
			ASSERT_LE(recs - 1 - lossless_reserve(recs), n)
				TH_LOG("%ld records, stop %d: signalled with %ld",
				       recs, stops, n);
			ASSERT_GE(recs - 1, n);
			stops++;
			ASSERT_GT(100000, stops);
		}
		ASSERT_STOPSIG(SIGSTOP, status);
		ASSERT_LT(0, stops) TH_LOG("%ld records: no overflow stop", recs);
		ASSERT_EQ(LOOP_EDGES, edges)
			TH_LOG("%ld records: %d overflow stops", recs, stops);
		finish(pid);
	}
}

/*
 * The same for switch records (PTRACE_BTS_O_SCHED, "Works on any cpu"):
 * a tracee that sleeps 300 times, drained at each overflow stop of a
 * buffer of 64 records, loses none: no BTS_LOST, lost 0, arrivals and
 * departures alternate across the drains, and there is a departure for
 * each sleep and each stop.  Each overflow stop finds at least the
 * records of a buffer down to its reserve ("an eighth of it (from 8 to
 * 256 records)", 8 here) and its last slot, and at most all but that slot.
 */
TEST(lossless_switches)
{
	int sig = SIGRTMIN + 10, status, stops = 0;
	long n, i, total = 0, departs = 0;
	long long lost;
	pid_t pid;

	if (!bts_available())
		SKIP(return, NO_BTS);
	pid = start_tracee(body_stops, LONG_NAPS, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_config(pid, NREC(64), A | S | G | LOSS, sig));
	for (;;) {
		status = resume(pid, 0);
		ASSERT_TRUE(WIFSTOPPED(status)) TH_LOG("status %#x", status);
		lost = bts_lost(pid);
		ASSERT_EQ(0, lost) TH_LOG("stop %d: %lld lost", stops, lost);
		ASSERT_GE(BIG_RECS - 64, total);
		n = bts_drain(pid, big + total, 64);
		ASSERT_LE(0, n);
		total += n;
		if (WSTOPSIG(status) != sig)
			break;
		ASSERT_TRUE(overflow_stop(pid, sig)) TH_LOG("stop %d", stops);
		ASSERT_LE(64 - 1 - lossless_reserve(64), n)
			TH_LOG("stop %d: signalled with %ld records", stops, n);
		ASSERT_GE(63, n);
		stops++;
	}
	ASSERT_STOPSIG(SIGSTOP, status);
	ASSERT_LT(0, stops) TH_LOG("no overflow stop");
	ASSERT_SCHED(big, total, pid);
	EXPECT_EQ((__u32)BTS_TASK_ARRIVES, big[0].qualifier);
	EXPECT_EQ((__u32)BTS_TASK_DEPARTS, big[total - 1].qualifier);
	for (i = 0; i < total; i++)
		departs += big[i].qualifier == BTS_TASK_DEPARTS;
	/*
	 * Each overflow stop and the last stop is a departure, and so are
	 * most naps: a nap whose timer has expired by the time the task
	 * would sleep (a slow kernel) does not switch.  That nothing was
	 * lost is what lost and the alternation above say.
	 */
	ASSERT_LE(LONG_NAPS / 2 + stops + 1, departs)
		TH_LOG("%ld records, %d stops", total, stops);
	finish(pid);
}

/*
 * BTS_LOST: "only with PTRACE_BTS_O_LOSSLESS, and only as the last record:
 * records were dropped after the one before it, clock of them (the count,
 * not a time).  The buffer's last slot is kept for it"; "Records are
 * still dropped if ... the tracer resumes it without draining; BTS_LOST
 * and lost then say how many"; its pid is "the tracee's thread id", its
 * unused fields 0; PTRACE_BTS_SIZE counts it ("a BTS_LOST record
 * included"), GET's index 0 is it ("0 for the newest record (a BTS_LOST
 * record, if there is one)"), DRAIN returns it, last, and "A DRAIN into a
 * user buffer of size bytes never fails for lack of room".  The buffer is
 * the smallest lossless one, PTRACE_BTS_LOSSLESS_MIN_SIZE (16 records).
 */
TEST(lossless_lost_record)
{
	const long recs = PTRACE_BTS_LOSSLESS_MIN_SIZE / REC;
	int sig = SIGRTMIN + 11;
	struct bts_struct g0, g1, d[PTRACE_BTS_LOSSLESS_MIN_SIZE / 32];
	long long lost;
	pid_t pid;
	long n;

	if (!bts_available())
		SKIP(return, NO_BTS);
	pid = start_tracee(body_stops, 4 * NAPS, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_config(pid, PTRACE_BTS_LOSSLESS_MIN_SIZE, A | S | G | LOSS, sig));
	ASSERT_STOPSIG(sig, resume(pid, 0));
	ASSERT_TRUE(overflow_stop(pid, sig));

	/* Resumed without draining: it runs on, records are dropped. */
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	n = bts_size(pid);
	ASSERT_EQ(recs, n) TH_LOG("SIZE does not count the BTS_LOST record");
	ASSERT_EQ(0, bts_req(PTRACE_BTS_GET, pid, &g0, 0));
	ASSERT_EQ((__u32)BTS_LOST, g0.qualifier);
	EXPECT_EQ((__u32)pid, g0.pid);
	EXPECT_EQ(0ULL, g0.from);
	EXPECT_EQ(0ULL, g0.to);
	ASSERT_LT(0ULL, g0.clock);
	ASSERT_GT(1000000ULL, g0.clock) TH_LOG("clock %llu: a time, not a count",
					       (unsigned long long)g0.clock);
	lost = bts_lost(pid);
	ASSERT_EQ((long long)g0.clock, lost);
	ASSERT_EQ(0, bts_req(PTRACE_BTS_GET, pid, &g1, 1));
	ASSERT_NE((__u32)BTS_LOST, g1.qualifier);

	memset(d, 0x5a, sizeof(d));
	ASSERT_EQ(recs, bts_drain(pid, d, recs)) TH_LOG("errno %d", errno);
	ASSERT_EQ(0, memcmp(&d[recs - 1], &g0, REC)) TH_LOG("BTS_LOST is not the last");
	ASSERT_EQ(0, memcmp(&d[recs - 2], &g1, REC));
	ASSERT_SCHED(d, recs - 1, pid);
	ASSERT_EQ(0, bts_size(pid));
	ASSERT_EQ(0, bts_lost(pid));

	/* Drained: the signal is armed again and the count starts afresh. */
	ASSERT_STOPSIG(sig, resume(pid, 0));
	ASSERT_TRUE(overflow_stop(pid, sig));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_EQ(recs, bts_size(pid));
	ASSERT_EQ(0, bts_req(PTRACE_BTS_GET, pid, &g0, 0));
	ASSERT_EQ((__u32)BTS_LOST, g0.qualifier);
	ASSERT_EQ((long long)g0.clock, bts_lost(pid));
	finish(pid);
}

/* Whether @pid's records are still those of @s (its STATUS aside). */
static bool same_records(pid_t pid, const struct snapshot *s)
{
	static struct snapshot now;

	return !take_snapshot(pid, &now) && now.n == s->n &&
	       !memcmp(now.r, s->r, s->n * REC);
}

/*
 * PTRACE_BTS_O_LOSSLESS: "A configuration that keeps more records than
 * the buffer then holds keeps the oldest and counts the others as lost":
 * a full circular buffer of 16 records, made lossless, holds 15 ("The
 * buffer's last slot is kept for a BTS_LOST record"), the oldest, and
 * lost is 1 (a BTS_LOST record, if any, says 1 too).  "A configuration
 * that keeps a full linear buffer (or, with PTRACE_BTS_O_LOSSLESS, one
 * past its reserve) with PTRACE_BTS_O_SIGNAL sends the overflow signal at
 * once": so for that buffer, and for one of 16 records holding 9 to 15
 * (past its reserve of 8, not full: nothing lost, nothing changed); a
 * buffer of 64 records holding a dozen keeps its reserve ("The signal is
 * sent while the buffer has a reserve left"): no signal.
 */
TEST(lossless_config_keeps_oldest)
{
	const __u32 min = PTRACE_BTS_LOSSLESS_MIN_SIZE;
	int sig = SIGRTMIN + 12;
	static struct snapshot snap;
	struct bts_struct g, d[16];
	struct pending p[4];
	long n, i, kept, has_lost;
	pid_t pid;

	if (!bts_available())
		SKIP(return, NO_BTS);
	pid = start_tracee(body_stops, NAPS, 0, true);
	ASSERT_LT(0, pid);

	/* Circular and full: the last 16 of some 28 records. */
	ASSERT_EQ(0, bts_config(pid, min, A | S, 0));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_EQ(0, take_snapshot(pid, &snap));
	ASSERT_EQ(16, snap.n);
	ASSERT_EQ(0ULL, snap.lost);
	ASSERT_EQ(0, peek_sig(pid, sig, p, 4));

	ASSERT_EQ(0, bts_config(pid, 0, S | G | LOSS, sig)) TH_LOG("errno %d", errno);
	ASSERT_EQ(1, peek_sig(pid, sig, p, 4)) TH_LOG("no signal at once");
	ASSERT_TRUE(from_kernel(&p[0]));
	EXPECT_EQ(PTRACE_BTS_SI_ERRNO, p[0].si.si_errno);
	ASSERT_EQ(1, bts_lost(pid));
	n = bts_size(pid);
	ASSERT_EQ(0, bts_req(PTRACE_BTS_GET, pid, &g, 0));
	has_lost = g.qualifier == BTS_LOST;
	if (has_lost) {
		EXPECT_EQ(1ULL, g.clock);
		EXPECT_EQ((__u32)pid, g.pid);
	}
	kept = n - has_lost;
	ASSERT_EQ(15, kept) TH_LOG("%ld records, BTS_LOST %ld", n, has_lost);
	/* GET's index 0 is the newest: the newest of the 16 went. */
	for (i = 0; i < kept; i++) {
		ASSERT_EQ(0, bts_req(PTRACE_BTS_GET, pid, &g, i + has_lost));
		ASSERT_EQ(0, memcmp(&g, &snap.r[i + 1], REC))
			TH_LOG("record %ld is not of the oldest", i);
	}
	ASSERT_STOPSIG(sig, resume(pid, 0));
	ASSERT_TRUE(overflow_stop(pid, sig));
	ASSERT_EQ(n, bts_drain(pid, d, 16));
	ASSERT_EQ(0, bts_lost(pid));
	finish(pid);

	/* A dozen records: of 64, below the reserve; of 16, past it. */
	pid = start_tracee(body_stops, 4, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts_config(pid, NREC(64), A | S, 0));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_EQ(0, take_snapshot(pid, &snap));
	ASSERT_LE(9, snap.n);
	ASSERT_GE(15, snap.n) TH_LOG("the tracee was preempted too often");
	ASSERT_EQ(0, bts_config(pid, 0, S | G | LOSS, sig)) TH_LOG("errno %d", errno);
	ASSERT_EQ(0, peek_sig(pid, sig, p, 4)) TH_LOG("signal with %ld of 64", snap.n);
	ASSERT_TRUE(same_records(pid, &snap));

	ASSERT_EQ(0, bts_config(pid, min, A | S, 0));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_EQ(0, take_snapshot(pid, &snap));
	ASSERT_LE(9, snap.n);
	ASSERT_GE(15, snap.n) TH_LOG("the tracee was preempted too often");
	ASSERT_EQ(0, bts_config(pid, 0, S | G | LOSS, sig)) TH_LOG("errno %d", errno);
	ASSERT_EQ(1, peek_sig(pid, sig, p, 4)) TH_LOG("no signal with %ld of 16", snap.n);
	ASSERT_TRUE(from_kernel(&p[0]));
	ASSERT_EQ(0, bts_lost(pid));
	ASSERT_TRUE(same_records(pid, &snap));
	ASSERT_STOPSIG(sig, resume(pid, 0));
	ASSERT_TRUE(overflow_stop(pid, sig));
	finish(pid);
}

/*
 * "Under a limit of L bytes (a multiple of the page size) with nothing
 * else locked, the largest buffer is L / 24 records, L / 24 * 32 bytes";
 * "PTRACE_BTS_SIZE_MAX ... is charged 12 MiB, more than the 8 MiB
 * RLIMIT_MEMLOCK many systems give a user, and an unprivileged tracer
 * asking for it gets ENOMEM".  A user of its own, without CAP_IPC_LOCK.
 */
TEST(memlock_largest_size)
{
	long page = sysconf(_SC_PAGESIZE);
	const rlim_t limits[] = { page, 4 * page, 8 << 20 };
	struct rlimit rl = { .rlim_cur = page, .rlim_max = 8 << 20 };
	unsigned int i;
	__u32 recs;
	pid_t pid;

	if (geteuid())
		SKIP(return, "needs root to become an unprivileged user");
	if (!bts_available())
		SKIP(return, NO_BTS);
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	ASSERT_EQ(0, setgroups(0, NULL));
	ASSERT_EQ(0, setgid(TEST_UID + 20));
	ASSERT_EQ(0, setuid(TEST_UID + 20));
	ASSERT_EQ(0, prctl(PR_SET_DUMPABLE, 1));
	pid = start_tracee(body_pause, 0, 0, true);
	ASSERT_LT(0, pid);

	for (i = 0; i < ARRAY_SIZE(limits); i++) {
		rl.rlim_cur = limits[i];
		ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
		recs = limits[i] / 24;
		ASSERT_EQ(0, bts_config(pid, NREC(recs), A | S, 0))
			TH_LOG("limit %lu, %u records: errno %d",
			       (unsigned long)limits[i], recs, errno);
		ASSERT_EQ(0, bts_config(pid, 0, A, 0));
		errno = 0;
		ASSERT_EQ(-1, bts_config(pid, NREC(recs + 1), A | S, 0))
			TH_LOG("limit %lu: %u records fit", (unsigned long)limits[i], recs + 1);
		ASSERT_EQ(ENOMEM, errno);
	}
	ASSERT_ERRNO(ENOMEM, bts_config(pid, PTRACE_BTS_SIZE_MAX, A | S, 0));
	ASSERT_EQ(0, bts_size(pid));
	finish(pid);
}

/*
 * "Its capacity is given in bytes of struct bts_struct records (size),
 * while PTRACE_BTS_SIZE returns a number of records: divide one by
 * sizeof(struct bts_struct) (32) to get the other"; size "a multiple of
 * sizeof(struct bts_struct)"; "Without this flag size must be 0 or the
 * current size" (in bytes).
 */
TEST(size_records_size_bytes)
{
	struct ptrace_bts_config st;
	pid_t pid;

	if (!bts_available())
		SKIP(return, NO_BTS);
	pid = start_tracee(body_stops, NAPS, 0, true);
	ASSERT_LT(0, pid);
	ASSERT_ERRNO(EINVAL, bts_config(pid, 8, A | S, 0));
	ASSERT_EQ(0, bts_config(pid, 8 * 32, A | S, 0));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_EQ(8, bts_size(pid));
	ASSERT_EQ(0, bts_status(pid, &st));
	ASSERT_EQ(256U, st.size);
	ASSERT_EQ(32U, st.bts_size);
	ASSERT_ERRNO(EINVAL, bts_config(pid, 8, S, 0));
	ASSERT_EQ(8, bts_size(pid));
	ASSERT_EQ(0, bts_config(pid, 256, S, 0));
	ASSERT_EQ(8, bts_size(pid));

	ASSERT_EQ(0, bts_config(pid, 32, A | S, 0));
	ASSERT_STOPSIG(SIGSTOP, resume(pid, 0));
	ASSERT_EQ(1, bts_size(pid));
	ASSERT_EQ(0, bts_status(pid, &st));
	ASSERT_EQ(32U, st.size);
	finish(pid);
}

TEST_HARNESS_MAIN
