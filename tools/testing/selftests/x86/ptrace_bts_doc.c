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
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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

/* Everything a tracer can see without changing it. */
struct snapshot {
	struct ptrace_bts_config st;
	long n;
	struct bts_struct r[MAX_RECS];
};

static int take_snapshot(pid_t pid, struct snapshot *s)
{
	long i;

	memset(s, 0, sizeof(*s));
	if (bts_status(pid, &s->st))
		return -1;
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

	return !take_snapshot(pid, &now) && !memcmp(&now, s, sizeof(now));
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

	ASSERT_ERRNO(EINVAL, bts_req(PTRACE_BTS_STATUS, pid, buf, sizeof(*big) - 1));
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
	{ "unknown flag", 0, S | 0x10, 0, 0, EINVAL },
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
	ASSERT_ERRNO(EINVAL, bts_req(PTRACE_BTS_CONFIG, pid, buf, sizeof(cfg) - 1));
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

TEST_HARNESS_MAIN
