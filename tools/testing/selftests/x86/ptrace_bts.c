// SPDX-License-Identifier: GPL-2.0
/*
 * PTRACE_BTS_*: the branch trace of a tracee, for debuggers.
 *
 * Every request and its errors, the memory accounting, who may see what,
 * switch records (software: they work on any cpu), the overflow signal,
 * fork, exec, detach, a tracer that goes away, and the branches of a known
 * code sequence where the cpu has BTS.  Built as ptrace_bts_32 and
 * ptrace_bts_64: the structures have one layout for both.
 */
#define _GNU_SOURCE

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Not <sys/ptrace.h>: its enum clashes with the kernel's numbers. */
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <linux/ptrace.h>
#include <asm/ptrace-bts.h>

#include "../kselftest_harness.h"

/* The ABI: one layout for every tracer, whatever its word size. */
static_assert(sizeof(struct ptrace_bts_config) == 24, "config size");
static_assert(PTRACE_BTS_CONFIG_SIZE_VER0 == 16, "first config size");
static_assert(offsetof(struct ptrace_bts_config, bts_size) == 12, "config");
static_assert(sizeof(struct bts_struct) == 32, "record size");
static_assert(offsetof(struct bts_struct, pid) == 4, "record pid");
static_assert(offsetof(struct bts_struct, from) == 8, "record from");
static_assert(offsetof(struct bts_struct, to) == 16, "record to");
static_assert(offsetof(struct bts_struct, clock) == 24, "record clock");

#define REC		sizeof(struct bts_struct)
#define CFG		sizeof(struct ptrace_bts_config)
#define NOBODY		65534
#define SLEEPS		5

static long bts(long request, pid_t pid, unsigned long addr,
		unsigned long data)
{
	return syscall(SYS_ptrace, request, pid, addr, data);
}

static long config(pid_t pid, unsigned int flags, unsigned int size,
		   unsigned int signal)
{
	struct ptrace_bts_config cfg = {
		.size = size, .flags = flags, .signal = signal,
	};

	return bts(PTRACE_BTS_CONFIG, pid, (unsigned long)&cfg, sizeof(cfg));
}

static struct ptrace_bts_config status(pid_t pid)
{
	struct ptrace_bts_config cfg;

	memset(&cfg, 0xa5, sizeof(cfg));
	if (bts(PTRACE_BTS_STATUS, pid, (unsigned long)&cfg, sizeof(cfg)))
		memset(&cfg, 0xff, sizeof(cfg));
	return cfg;
}

/* Whether the kernel should offer branch recording here. */
static bool cpu_has_bts(void)
{
	bool bts = false, dtes64 = false;
	char line[4096];
	FILE *f;

	f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		bts = strstr(line, " bts ") || strstr(line, " bts\n");
		dtes64 = strstr(line, " dtes64 ");
		break;
	}
	fclose(f);
	return bts && dtes64;
}

static bool is_kernel_address(uint64_t addr)
{
	return addr >> 63;
}

/*
 * Tracees.
 */

static void stop_forever(void)
{
	for (;;)
		raise(SIGSTOP);
}

static void sleeper(void)
{
	int i;

	for (i = 0; i < SLEEPS; i++)
		usleep(2000);
	stop_forever();
}

static void busy_sleeper(void)
{
	for (;;)
		usleep(200);
}

/*
 * Two jumps, for a BTS model or a real cpu: the trace must hold jmp0 ->
 * jmp1 and right after it jmp1 -> end.  Local labels, so that the
 * compiler may copy the code; the addresses are those of this copy.
 */
struct branches {
	unsigned long jmp0, jmp1, end;
};

/* The addresses of the labels 1, 2 and 3 below, into %0, %1 and %2. */
#ifdef __x86_64__
#define LOAD_LABELS	"lea 1f(%%rip), %0\n\t" \
			"lea 2f(%%rip), %1\n\t" \
			"lea 3f(%%rip), %2\n\t"
#else
#define LOAD_LABELS	"mov $1f, %0\n\t" \
			"mov $2f, %1\n\t" \
			"mov $3f, %2\n\t"
#endif

static void take_branches(struct branches *b)
{
	asm volatile(LOAD_LABELS
		     "1: jmp 2f\n\t"
		     "ud2\n\t"
		     "2: jmp 3f\n\t"
		     "ud2\n\t"
		     "3:\n\t"
		     : "=r" (b->jmp0), "=r" (b->jmp1), "=r" (b->end)
		     : : "memory");
}

/* Where the tracee tells the tracer its addresses (shared memory). */
static struct branches *shared_branches;

static void brancher(void)
{
	struct branches b;

	take_branches(&b);
	if (shared_branches)
		*shared_branches = b;
	stop_forever();
}

static void exiter(void)
{
	usleep(2000);
	_exit(3);
}

/* Fills a small buffer with SIGUSR1 blocked, then stops, unblocks, stops. */
static void blocked_overflow(void)
{
	sigset_t set;
	int i;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (i = 0; i < 4 * SLEEPS; i++)
		usleep(1000);
	raise(SIGSTOP);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	stop_forever();
}

#define RT_MARK		0x5eed

/*
 * With SIGRTMIN + 1 blocked, queues it to itself with si_code SI_KERNEL
 * (as a kernel sender would) and si_pid RT_MARK (si_value would not reach
 * a 32-bit tracer: SI_KERNEL has the layout of kill()'s siginfo), then
 * fills a small buffer and stops, unblocks, stops.
 */
static void kernel_coded_rt(void)
{
	siginfo_t si = { .si_signo = SIGRTMIN + 1, .si_code = SI_KERNEL };
	sigset_t set;
	int i;

	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN + 1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	si.si_pid = RT_MARK;
	if (syscall(SYS_rt_tgsigqueueinfo, getpid(), syscall(SYS_gettid),
		    SIGRTMIN + 1, &si))
		_exit(97);
	for (i = 0; i < 4 * SLEEPS; i++)
		usleep(1000);
	raise(SIGSTOP);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	stop_forever();
}

static void forker(void)
{
	pid_t pid = fork();

	if (!pid)
		stop_forever();
	stop_forever();
}

static char *self_exe;

static void execer(void)
{
	execl(self_exe, self_exe, "--bts-idle", NULL);
	_exit(99);
}

/* Fork a tracee stopped at its first SIGSTOP, about to run @fn. */
static pid_t spawn(void (*fn)(void))
{
	int st;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (bts(PTRACE_TRACEME, 0, 0, 0))
			_exit(98);
		raise(SIGSTOP);
		fn();
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st) ||
	    WSTOPSIG(st) != SIGSTOP)
		return -1;
	bts(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_EXITKILL);
	return pid;
}

/* Continue @pid (with @sig) until its next stop; the stop signal or -1. */
static int cont(pid_t pid, int sig)
{
	int st;

	if (bts(PTRACE_CONT, pid, 0, sig))
		return -1;
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st))
		return -1;
	return st >> 8;
}

static void reap(pid_t pid)
{
	int st;

	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

/* Seize @pid from a tracer that is not its parent; it is stopped then. */
static int seize_stopped(pid_t pid)
{
	int st;

	if (bts(PTRACE_SEIZE, pid, 0, 0) || bts(PTRACE_INTERRUPT, pid, 0, 0) ||
	    waitpid(pid, &st, 0) != pid)
		return -1;
	return 0;
}

/*
 * Whether our child @pid lives on @us microseconds from now: 0, or the
 * signal that killed it (-1 if it exited).
 */
static int death_after(pid_t pid, useconds_t us)
{
	int st;

	usleep(us);
	if (waitpid(pid, &st, WNOHANG) != pid)
		return 0;
	return WIFSIGNALED(st) ? WTERMSIG(st) : -1;
}

/* Drain @pid into a new array of at most @max records; the count. */
static long drain(pid_t pid, struct bts_struct **out, size_t max)
{
	*out = calloc(max ? max : 1, REC);
	return bts(PTRACE_BTS_DRAIN, pid, (unsigned long)*out, max * REC);
}

/* Switch records of one tracee: arrivals and departures alternate. */
static int check_switches(const struct bts_struct *r, long n, pid_t pid,
			  unsigned int first)
{
	unsigned int want = first;
	long i;

	for (i = 0; i < n; i++) {
		if (r[i].qualifier != want || r[i].pid != (uint32_t)pid ||
		    !r[i].clock || r[i].from || r[i].to)
			return i + 1;
		/* Arrival and departure on the same cpu: in order. */
		if (want == BTS_TASK_DEPARTS && i && r[i].clock < r[i - 1].clock)
			return i + 1;
		want = want == BTS_TASK_ARRIVES ? BTS_TASK_DEPARTS :
						  BTS_TASK_ARRIVES;
	}
	return 0;
}

/*
 * The requests and their errors.
 */

TEST(request_numbers)
{
	/* 40-45 on x86, next to PTRACE_SINGLEBLOCK (33). */
	EXPECT_EQ(40, PTRACE_BTS_CONFIG);
	EXPECT_EQ(41, PTRACE_BTS_STATUS);
	EXPECT_EQ(42, PTRACE_BTS_SIZE);
	EXPECT_EQ(43, PTRACE_BTS_GET);
	EXPECT_EQ(44, PTRACE_BTS_CLEAR);
	EXPECT_EQ(45, PTRACE_BTS_DRAIN);
}

TEST(not_attached)
{
	struct ptrace_bts_config cfg = { 0 };
	struct bts_struct rec;
	pid_t pid;

	/* A child that is not traced: every request fails with ESRCH. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		pause();
		_exit(0);
	}
	EXPECT_EQ(-1, bts(PTRACE_BTS_CONFIG, pid, (unsigned long)&cfg,
			  sizeof(cfg)));
	EXPECT_EQ(ESRCH, errno);
	EXPECT_EQ(-1, bts(PTRACE_BTS_STATUS, pid, (unsigned long)&cfg,
			  sizeof(cfg)));
	EXPECT_EQ(ESRCH, errno);
	EXPECT_EQ(-1, bts(PTRACE_BTS_SIZE, pid, 0, 0));
	EXPECT_EQ(ESRCH, errno);
	EXPECT_EQ(-1, bts(PTRACE_BTS_GET, pid, (unsigned long)&rec, 0));
	EXPECT_EQ(ESRCH, errno);
	EXPECT_EQ(-1, bts(PTRACE_BTS_CLEAR, pid, 0, 0));
	EXPECT_EQ(ESRCH, errno);
	EXPECT_EQ(-1, bts(PTRACE_BTS_DRAIN, pid, (unsigned long)&rec,
			  sizeof(rec)));
	EXPECT_EQ(ESRCH, errno);
	reap(pid);
}

TEST(unconfigured)
{
	struct ptrace_bts_config cfg;
	struct bts_struct rec;
	pid_t pid;

	pid = spawn(sleeper);
	ASSERT_LT(0, pid);

	cfg = status(pid);
	EXPECT_EQ(0, cfg.size);
	EXPECT_EQ(0, cfg.flags);
	EXPECT_EQ(0, cfg.signal);
	EXPECT_EQ(REC, cfg.bts_size);
	EXPECT_EQ(0, bts(PTRACE_BTS_SIZE, pid, 0, 0));
	EXPECT_EQ(0, bts(PTRACE_BTS_CLEAR, pid, 0, 0));
	EXPECT_EQ(0, bts(PTRACE_BTS_DRAIN, pid, 0, 0));
	EXPECT_EQ(-1, bts(PTRACE_BTS_GET, pid, (unsigned long)&rec, 0));
	EXPECT_EQ(EINVAL, errno);
	/* Stopping what does not record is no error. */
	EXPECT_EQ(0, config(pid, 0, 0, 0));
	reap(pid);
}

TEST(config_errors)
{
	struct {
		struct ptrace_bts_config cfg;
		uint32_t tail[2];
	} big = { { 0 } };
	struct ptrace_bts_config cfg, before;
	pid_t pid;

	pid = spawn(sleeper);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, config(pid, PTRACE_BTS_O_ALLOC, 64 * REC, 0));
	before = status(pid);

#define EXPECT_CONFIG_ERR(err, flags, size, sig) do {			\
		EXPECT_EQ(-1, config(pid, flags, size, sig));		\
		EXPECT_EQ(err, errno);					\
		cfg = status(pid);					\
		EXPECT_EQ(0, memcmp(&cfg, &before, sizeof(cfg)));	\
	} while (0)

	/* Unknown flags are refused, not ignored. */
	EXPECT_CONFIG_ERR(EINVAL, 0x10, 0, 0);
	EXPECT_CONFIG_ERR(EINVAL, 0x80000000 | PTRACE_BTS_O_SCHED, 0, 0);
	/* Sizes: whole records, at most PTRACE_BTS_SIZE_MAX. */
	EXPECT_CONFIG_ERR(EINVAL, PTRACE_BTS_O_ALLOC, REC + 1, 0);
	EXPECT_CONFIG_ERR(EINVAL, PTRACE_BTS_O_ALLOC, PTRACE_BTS_SIZE_MAX + REC,
			  0);
	EXPECT_CONFIG_ERR(EINVAL, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED, 0,
			  0);
	/* Without O_ALLOC, 0 or the size there is. */
	EXPECT_CONFIG_ERR(EINVAL, PTRACE_BTS_O_SCHED, 32 * REC, 0);
	/* Signals: a real one with O_SIGNAL, none without. */
	EXPECT_CONFIG_ERR(EINVAL, PTRACE_BTS_O_SCHED | PTRACE_BTS_O_SIGNAL, 0,
			  0);
	EXPECT_CONFIG_ERR(EINVAL, PTRACE_BTS_O_SCHED | PTRACE_BTS_O_SIGNAL, 0,
			  SIGKILL);
	EXPECT_CONFIG_ERR(EINVAL, PTRACE_BTS_O_SCHED | PTRACE_BTS_O_SIGNAL, 0,
			  SIGSTOP);
	EXPECT_CONFIG_ERR(EINVAL, PTRACE_BTS_O_SCHED | PTRACE_BTS_O_SIGNAL, 0,
			  65);
	EXPECT_CONFIG_ERR(EINVAL, PTRACE_BTS_O_SCHED, 0, SIGUSR1);

	/* bts_size: 0 or the record size. */
	cfg = (struct ptrace_bts_config){ .flags = PTRACE_BTS_O_SCHED,
					  .bts_size = 24 };
	EXPECT_EQ(-1, bts(PTRACE_BTS_CONFIG, pid, (unsigned long)&cfg,
			  sizeof(cfg)));
	EXPECT_EQ(EINVAL, errno);
	/* The structure's size. */
	cfg = (struct ptrace_bts_config){ .flags = PTRACE_BTS_O_SCHED };
	EXPECT_EQ(-1, bts(PTRACE_BTS_CONFIG, pid, (unsigned long)&cfg,
			  PTRACE_BTS_CONFIG_SIZE_VER0 - 4));
	EXPECT_EQ(EINVAL, errno);
	/* A larger structure from a newer tracer: its tail must be 0. */
	big.cfg.flags = PTRACE_BTS_O_SCHED;
	big.tail[1] = 1;
	EXPECT_EQ(-1, bts(PTRACE_BTS_CONFIG, pid, (unsigned long)&big,
			  sizeof(big)));
	EXPECT_EQ(E2BIG, errno);
	/* Bad pointers. */
	EXPECT_EQ(-1, bts(PTRACE_BTS_CONFIG, pid, 8, sizeof(cfg)));
	EXPECT_EQ(EFAULT, errno);
	cfg = status(pid);
	EXPECT_EQ(0, memcmp(&cfg, &before, sizeof(cfg)));

	/* And what is right works; a zero tail too. */
	big.tail[1] = 0;
	EXPECT_EQ(0, bts(PTRACE_BTS_CONFIG, pid, (unsigned long)&big,
			 sizeof(big)));
	EXPECT_EQ(PTRACE_BTS_O_SCHED, status(pid).flags);
#undef EXPECT_CONFIG_ERR
	reap(pid);
}

TEST(status_zeroes_tail)
{
	struct {
		struct ptrace_bts_config cfg;
		uint8_t tail[48];
	} big;
	size_t i, dirty = 0;
	pid_t pid;

	pid = spawn(sleeper);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
			    64 * REC, 0));
	/* A newer tracer's larger structure: what this kernel lacks is 0. */
	memset(&big, 0xa5, sizeof(big));
	ASSERT_EQ(0, bts(PTRACE_BTS_STATUS, pid, (unsigned long)&big,
			 sizeof(big)));
	EXPECT_EQ(64 * REC, big.cfg.size);
	EXPECT_EQ(PTRACE_BTS_O_SCHED, big.cfg.flags);
	EXPECT_EQ(REC, big.cfg.bts_size);
	for (i = 0; i < sizeof(big.tail); i++)
		dirty += big.tail[i] != 0;
	EXPECT_EQ(0, dirty);
	reap(pid);
}

TEST(structure_sizes)
{
	long page = sysconf(_SC_PAGESIZE);
	struct ptrace_bts_config *cfg;
	size_t i, dirty = 0;
	uint8_t *buf;
	pid_t pid;

	buf = calloc(2, page);
	ASSERT_TRUE(!!buf);
	cfg = (struct ptrace_bts_config *)buf;
	pid = spawn(sleeper);
	ASSERT_LT(0, pid);

	/* Up to a page, if the bytes beyond the structure are 0. */
	cfg->size = 64 * REC;
	cfg->flags = PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED;
	EXPECT_EQ(0, bts(PTRACE_BTS_CONFIG, pid, (unsigned long)buf, page));
	EXPECT_EQ(PTRACE_BTS_O_SCHED, status(pid).flags);
	cfg->size = 0;
	cfg->flags = 0;
	buf[page - 1] = 1;
	EXPECT_EQ(-1, bts(PTRACE_BTS_CONFIG, pid, (unsigned long)buf, page));
	EXPECT_EQ(E2BIG, errno);
	buf[page - 1] = 0;
	/* No structure is larger than a page: E2BIG, as clone3(2). */
	EXPECT_EQ(-1, bts(PTRACE_BTS_CONFIG, pid, (unsigned long)buf,
			  page + 8));
	EXPECT_EQ(E2BIG, errno);
	EXPECT_EQ(PTRACE_BTS_O_SCHED, status(pid).flags);

	memset(buf, 0xa5, 2 * page);
	EXPECT_EQ(-1, bts(PTRACE_BTS_STATUS, pid, (unsigned long)buf,
			  page + 8));
	EXPECT_EQ(E2BIG, errno);
	ASSERT_EQ(0, bts(PTRACE_BTS_STATUS, pid, (unsigned long)buf, page));
	EXPECT_EQ(64 * REC, cfg->size);
	for (i = CFG; i < (size_t)page; i++)
		dirty += buf[i] != 0;
	EXPECT_EQ(0, dirty);
	free(buf);
	reap(pid);
}

TEST(no_buffer)
{
	pid_t pid;

	pid = spawn(sleeper);
	ASSERT_LT(0, pid);
	/* Recording needs a buffer: O_ALLOC first. */
	EXPECT_EQ(-1, config(pid, PTRACE_BTS_O_SCHED, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, status(pid).flags);
	reap(pid);
}

TEST(trace_needs_bts)
{
	long ret;
	pid_t pid;

	pid = spawn(sleeper);
	ASSERT_LT(0, pid);
	ret = config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_TRACE, 64 * REC, 0);
	if (cpu_has_bts()) {
		/* perf may hold BTS; else it works. */
		if (ret)
			EXPECT_EQ(EBUSY, errno);
	} else {
		EXPECT_EQ(-1, ret);
		EXPECT_EQ(EOPNOTSUPP, errno);
		EXPECT_EQ(0, status(pid).size);
	}
	reap(pid);
}

TEST(request_errors)
{
	struct ptrace_bts_config cfg;
	struct bts_struct rec, *r;
	long n;
	pid_t pid;

	pid = spawn(sleeper);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
			    64 * REC, 0));
	ASSERT_EQ(SIGSTOP, cont(pid, 0));
	n = bts(PTRACE_BTS_SIZE, pid, 0, 0);
	ASSERT_LE(2 * SLEEPS, n);

	EXPECT_EQ(-1, bts(PTRACE_BTS_STATUS, pid, (unsigned long)&cfg,
			  PTRACE_BTS_CONFIG_SIZE_VER0 - 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, bts(PTRACE_BTS_STATUS, pid, 8, sizeof(cfg)));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, bts(PTRACE_BTS_SIZE, pid, 1, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, bts(PTRACE_BTS_SIZE, pid, 0, 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, bts(PTRACE_BTS_CLEAR, pid, 0, 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, bts(PTRACE_BTS_GET, pid, (unsigned long)&rec, n));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, bts(PTRACE_BTS_GET, pid, (unsigned long)&rec, -1UL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, bts(PTRACE_BTS_GET, pid, 8, 0));
	EXPECT_EQ(EFAULT, errno);
	r = calloc(n, REC);
	ASSERT_TRUE(!!r);
	EXPECT_EQ(-1, bts(PTRACE_BTS_DRAIN, pid, (unsigned long)r,
			  (n - 1) * REC));
	EXPECT_EQ(EIO, errno);
	EXPECT_EQ(-1, bts(PTRACE_BTS_DRAIN, pid, 8, n * REC));
	EXPECT_EQ(EFAULT, errno);
	/* Nothing was lost on the way. */
	EXPECT_EQ(n, bts(PTRACE_BTS_SIZE, pid, 0, 0));
	EXPECT_EQ(n, bts(PTRACE_BTS_DRAIN, pid, (unsigned long)r, n * REC));
	EXPECT_EQ(0, bts(PTRACE_BTS_SIZE, pid, 0, 0));
	free(r);
	reap(pid);
}

/*
 * Records.
 */

TEST(switch_records)
{
	struct ptrace_bts_config cfg;
	struct bts_struct *r;
	long n;
	pid_t pid;

	pid = spawn(sleeper);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
			    256 * REC, 0));
	cfg = status(pid);
	EXPECT_EQ(256 * REC, cfg.size);
	EXPECT_EQ(PTRACE_BTS_O_SCHED, cfg.flags);
	EXPECT_EQ(REC, cfg.bts_size);
	/* Nothing yet: the tracee has not run. */
	EXPECT_EQ(0, bts(PTRACE_BTS_SIZE, pid, 0, 0));

	ASSERT_EQ(SIGSTOP, cont(pid, 0));
	n = drain(pid, &r, 256);
	/* At least one departure and arrival per sleep, and the stop. */
	ASSERT_LE(2 * SLEEPS + 2, n);
	/* It arrived first and departed for the stop last. */
	EXPECT_EQ(0, check_switches(r, n, pid, BTS_TASK_ARRIVES));
	EXPECT_EQ(BTS_TASK_DEPARTS, r[n - 1].qualifier);
	EXPECT_EQ(0, bts(PTRACE_BTS_SIZE, pid, 0, 0));
	free(r);
	reap(pid);
}

TEST(get_agrees_with_drain)
{
	struct bts_struct *r, *g;
	long n, i;
	pid_t pid;

	pid = spawn(sleeper);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
			    256 * REC, 0));
	ASSERT_EQ(SIGSTOP, cont(pid, 0));
	n = bts(PTRACE_BTS_SIZE, pid, 0, 0);
	ASSERT_LT(0, n);
	g = calloc(n, REC);
	ASSERT_TRUE(!!g);
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, bts(PTRACE_BTS_GET, pid, (unsigned long)&g[i], i));
	/* GET does not consume. */
	EXPECT_EQ(n, bts(PTRACE_BTS_SIZE, pid, 0, 0));
	ASSERT_EQ(n, drain(pid, &r, n));
	/* GET 0 is the newest, DRAIN gives the oldest first. */
	for (i = 0; i < n; i++)
		EXPECT_EQ(0, memcmp(&g[i], &r[n - 1 - i], REC));
	free(g);
	free(r);
	reap(pid);
}

TEST(wrap)
{
	struct bts_struct *r;
	pid_t pid;
	long n;

	pid = spawn(sleeper);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
			    4 * REC, 0));
	ASSERT_EQ(SIGSTOP, cont(pid, 0));
	/* A full circular buffer: the four newest. */
	n = drain(pid, &r, 4);
	ASSERT_EQ(4, n);
	EXPECT_EQ(0, check_switches(r, n, pid, BTS_TASK_ARRIVES));
	EXPECT_EQ(BTS_TASK_DEPARTS, r[3].qualifier);
	free(r);
	reap(pid);
}

TEST(clear)
{
	struct bts_struct rec;
	pid_t pid;

	pid = spawn(sleeper);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
			    64 * REC, 0));
	ASSERT_EQ(SIGSTOP, cont(pid, 0));
	ASSERT_LT(0, bts(PTRACE_BTS_SIZE, pid, 0, 0));
	EXPECT_EQ(0, bts(PTRACE_BTS_CLEAR, pid, 0, 0));
	EXPECT_EQ(0, bts(PTRACE_BTS_SIZE, pid, 0, 0));
	EXPECT_EQ(-1, bts(PTRACE_BTS_GET, pid, (unsigned long)&rec, 0));
	EXPECT_EQ(EINVAL, errno);
	/* And it records again. */
	ASSERT_EQ(SIGSTOP, cont(pid, 0));
	EXPECT_LE(2, bts(PTRACE_BTS_SIZE, pid, 0, 0));
	reap(pid);
}

TEST(reconfigure_keeps_records)
{
	struct bts_struct *before, *after;
	long n, m;
	pid_t pid;

	pid = spawn(sleeper);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
			    64 * REC, 0));
	ASSERT_EQ(SIGSTOP, cont(pid, 0));
	n = bts(PTRACE_BTS_SIZE, pid, 0, 0);
	ASSERT_LT(0, n);
	before = calloc(n, REC);
	ASSERT_TRUE(!!before);
	ASSERT_EQ(0, bts(PTRACE_BTS_GET, pid, (unsigned long)before, 0));

	/* Off: the records stay, nothing new comes. */
	ASSERT_EQ(0, config(pid, 0, 0, 0));
	EXPECT_EQ(0, status(pid).flags);
	EXPECT_EQ(64 * REC, status(pid).size);
	EXPECT_EQ(n, bts(PTRACE_BTS_SIZE, pid, 0, 0));
	ASSERT_EQ(SIGSTOP, cont(pid, 0));
	EXPECT_EQ(n, bts(PTRACE_BTS_SIZE, pid, 0, 0));

	/* On again: after the old ones. */
	ASSERT_EQ(0, config(pid, PTRACE_BTS_O_SCHED, 64 * REC, 0));
	ASSERT_EQ(SIGSTOP, cont(pid, 0));
	m = drain(pid, &after, 64);
	ASSERT_LT(n, m);
	EXPECT_EQ(0, memcmp(&after[n - 1], before, REC));
	EXPECT_EQ(BTS_TASK_ARRIVES, after[n].qualifier);
	free(before);
	free(after);
	reap(pid);
}

TEST(reallocate_and_free)
{
	pid_t pid;

	pid = spawn(sleeper);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
			    64 * REC, 0));
	ASSERT_EQ(SIGSTOP, cont(pid, 0));
	ASSERT_LT(0, bts(PTRACE_BTS_SIZE, pid, 0, 0));
	/* A new buffer starts empty. */
	ASSERT_EQ(0, config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
			    128 * REC, 0));
	EXPECT_EQ(128 * REC, status(pid).size);
	EXPECT_EQ(0, bts(PTRACE_BTS_SIZE, pid, 0, 0));
	/* Size 0 frees it. */
	ASSERT_EQ(0, config(pid, PTRACE_BTS_O_ALLOC, 0, 0));
	EXPECT_EQ(0, status(pid).size);
	EXPECT_EQ(0, status(pid).flags);
	EXPECT_EQ(0, bts(PTRACE_BTS_SIZE, pid, 0, 0));
	reap(pid);
}

TEST(signal_when_full)
{
	struct bts_struct *r;
	int i, sig;
	long n;
	pid_t pid;

	pid = spawn(busy_sleeper);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED |
				 PTRACE_BTS_O_SIGNAL, 8 * REC, SIGUSR1));
	EXPECT_EQ(SIGUSR1, status(pid).signal);
	EXPECT_EQ(PTRACE_BTS_O_SCHED | PTRACE_BTS_O_SIGNAL, status(pid).flags);

	for (i = 0; i < 3; i++) {
		/* A signal-delivery-stop, with the buffer full. */
		sig = cont(pid, 0);
		ASSERT_EQ(SIGUSR1, sig);
		/* Full and linear: the oldest eight, not the newest. */
		n = drain(pid, &r, 8);
		ASSERT_EQ(8, n);
		EXPECT_EQ(0, check_switches(r, n, pid, BTS_TASK_ARRIVES));
		free(r);
		EXPECT_EQ(0, bts(PTRACE_BTS_SIZE, pid, 0, 0));
	}
	reap(pid);
}

TEST(drain_discards_stale_overflow)
{
	struct bts_struct *r;
	pid_t pid;
	long n;

	pid = spawn(blocked_overflow);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED |
				 PTRACE_BTS_O_SIGNAL, 8 * REC, SIGUSR1));
	/* The buffer filled while SIGUSR1 was blocked: it is pending. */
	ASSERT_EQ(SIGSTOP, cont(pid, 0));
	n = drain(pid, &r, 8);
	EXPECT_EQ(8, n);
	free(r);
	/* Drained: unblocking it must not report an overflow any more. */
	EXPECT_EQ(SIGSTOP, cont(pid, 0));
	EXPECT_GT(8, bts(PTRACE_BTS_SIZE, pid, 0, 0));
	reap(pid);
}

/*
 * DRAIN takes back the overflow signal the kernel queued, not another
 * instance of the same signal that looks like it (si_code SI_KERNEL).
 */
TEST(drain_spares_other_instances)
{
	struct bts_struct *r;
	siginfo_t si;
	pid_t pid;
	long n;

	pid = spawn(kernel_coded_rt);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED |
				 PTRACE_BTS_O_SIGNAL, 8 * REC, SIGRTMIN + 1));
	/* Both are pending: the tracee's own, then the overflow's. */
	ASSERT_EQ(SIGSTOP, cont(pid, 0));
	n = drain(pid, &r, 8);
	EXPECT_EQ(8, n);
	free(r);
	/* Unblocked: only the tracee's own comes. */
	ASSERT_EQ(SIGRTMIN + 1, cont(pid, 0));
	ASSERT_EQ(0, bts(PTRACE_GETSIGINFO, pid, 0, (unsigned long)&si));
	EXPECT_EQ(SI_KERNEL, si.si_code);
	EXPECT_EQ(RT_MARK, si.si_pid);
	EXPECT_EQ(SIGSTOP, cont(pid, 0));
	reap(pid);
}

TEST(fork_does_not_inherit)
{
	unsigned long msg;
	pid_t pid, child;
	int st;

	pid = spawn(forker);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts(PTRACE_SETOPTIONS, pid, 0,
			 PTRACE_O_EXITKILL | PTRACE_O_TRACEFORK));
	ASSERT_EQ(0, config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
			    64 * REC, 0));
	ASSERT_EQ(SIGTRAP | (PTRACE_EVENT_FORK << 8), cont(pid, 0));
	ASSERT_EQ(0, bts(PTRACE_GETEVENTMSG, pid, 0, (unsigned long)&msg));
	child = msg;
	ASSERT_EQ(child, waitpid(child, &st, __WALL));
	ASSERT_TRUE(WIFSTOPPED(st));

	/* The child is traced by us, but records nothing. */
	EXPECT_EQ(0, status(child).size);
	EXPECT_EQ(0, status(child).flags);
	EXPECT_EQ(0, bts(PTRACE_BTS_SIZE, child, 0, 0));
	ASSERT_EQ(SIGSTOP, cont(child, 0));
	EXPECT_EQ(0, bts(PTRACE_BTS_SIZE, child, 0, 0));
	/* The parent still does. */
	EXPECT_EQ(PTRACE_BTS_O_SCHED, status(pid).flags);
	EXPECT_LT(0, bts(PTRACE_BTS_SIZE, pid, 0, 0));
	reap(child);
	reap(pid);
}

TEST(exec_record)
{
	struct bts_struct *r;
	bool found = false;
	long n, i;
	pid_t pid;

	pid = spawn(execer);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts(PTRACE_SETOPTIONS, pid, 0,
			 PTRACE_O_EXITKILL | PTRACE_O_TRACEEXEC));
	ASSERT_EQ(0, config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
			    64 * REC, 0));
	ASSERT_EQ(SIGTRAP | (PTRACE_EVENT_EXEC << 8), cont(pid, 0));
	/* The trace goes on across exec, with a record of it. */
	EXPECT_EQ(PTRACE_BTS_O_SCHED, status(pid).flags);
	n = drain(pid, &r, 64);
	ASSERT_LT(0, n);
	for (i = 0; i < n; i++) {
		if (r[i].qualifier == BTS_TASK_EXEC) {
			found = true;
			EXPECT_EQ((uint32_t)pid, r[i].pid);
			EXPECT_NE(0, r[i].clock);
		}
	}
	EXPECT_TRUE(found);
	free(r);
	reap(pid);
}

/*
 * Lifetime.
 */

TEST(detach_drops_trace)
{
	struct ptrace_bts_config cfg;
	pid_t pid;
	int st;

	pid = spawn(busy_sleeper);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
			    64 * REC, 0));
	ASSERT_EQ(0, bts(PTRACE_DETACH, pid, 0, 0));

	ASSERT_EQ(0, bts(PTRACE_ATTACH, pid, 0, 0));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	cfg = status(pid);
	EXPECT_EQ(0, cfg.size);
	EXPECT_EQ(0, cfg.flags);
	EXPECT_EQ(0, bts(PTRACE_BTS_SIZE, pid, 0, 0));
	reap(pid);
}

TEST(next_tracer_starts_afresh)
{
	pid_t pid, first;
	int st;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		busy_sleeper();
	}

	/* A first tracer configures and exits without detaching. */
	first = fork();
	ASSERT_LE(0, first);
	if (!first) {
		if (bts(PTRACE_ATTACH, pid, 0, 0) || waitpid(pid, &st, 0) != pid)
			_exit(1);
		if (config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
			   64 * REC, 0))
			_exit(2);
		if (bts(PTRACE_CONT, pid, 0, 0))
			_exit(3);
		usleep(10000);
		_exit(0);
	}
	ASSERT_EQ(first, waitpid(first, &st, 0));
	ASSERT_EQ(0, WEXITSTATUS(st));

	/* The next one sees none of it. */
	ASSERT_EQ(0, bts(PTRACE_ATTACH, pid, 0, 0));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_EQ(0, status(pid).size);
	EXPECT_EQ(0, bts(PTRACE_BTS_SIZE, pid, 0, 0));
	ASSERT_EQ(0, config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
			    64 * REC, 0));
	reap(pid);
}

TEST(exit_stop)
{
	struct ptrace_bts_config before;
	pid_t pid;
	int st;

	pid = spawn(exiter);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, bts(PTRACE_SETOPTIONS, pid, 0,
			 PTRACE_O_EXITKILL | PTRACE_O_TRACEEXIT));
	ASSERT_EQ(0, config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
			    64 * REC, 0));
	ASSERT_EQ(SIGTRAP | (PTRACE_EVENT_EXIT << 8), cont(pid, 0));

	/* Its records can be read on its way out... */
	EXPECT_LT(0, bts(PTRACE_BTS_SIZE, pid, 0, 0));
	before = status(pid);
	EXPECT_EQ(PTRACE_BTS_O_SCHED, before.flags);
	/* ...but no recording starts: it is exiting. */
	EXPECT_EQ(-1, config(pid, PTRACE_BTS_O_SCHED | PTRACE_BTS_O_SIGNAL, 0,
			     SIGUSR1));
	EXPECT_EQ(ESRCH, errno);
	EXPECT_EQ(-1, config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
			     32 * REC, 0));
	EXPECT_EQ(ESRCH, errno);
	before = status(pid);
	EXPECT_EQ(PTRACE_BTS_O_SCHED, before.flags);
	EXPECT_EQ(64 * REC, before.size);
	/* Stopping and freeing do. */
	EXPECT_EQ(0, config(pid, 0, 0, 0));
	EXPECT_EQ(0, config(pid, PTRACE_BTS_O_ALLOC, 0, 0));
	EXPECT_EQ(0, status(pid).size);

	ASSERT_EQ(0, bts(PTRACE_CONT, pid, 0, 0));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(3, WEXITSTATUS(st));
}

TEST(tracer_exit_stops_tracing)
{
	unsigned int flags = PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED |
			     PTRACE_BTS_O_SIGNAL;
	pid_t pid, tracer, ret;
	int st;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		busy_sleeper();
	}
	if (cpu_has_bts())
		flags |= PTRACE_BTS_O_TRACE;

	/* A debugger asks for a signal on overflow and crashes. */
	tracer = fork();
	ASSERT_LE(0, tracer);
	if (!tracer) {
		if (seize_stopped(pid))
			_exit(1);
		if (config(pid, flags, 8 * REC, SIGUSR1) &&
		    (errno != EBUSY ||
		     config(pid, flags & ~PTRACE_BTS_O_TRACE, 8 * REC,
			    SIGUSR1)))
			_exit(2);
		/* Gone: the tracee runs on from the trap, untraced. */
		_exit(0);
	}
	ASSERT_EQ(tracer, waitpid(tracer, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(0, WEXITSTATUS(st));

	/* Eight records are four sleeps: the buffer would be full by now. */
	ret = death_after(pid, 100000);
	ASSERT_EQ(0, ret) TH_LOG("the untraced tracee was killed by signal %d",
				 ret);

	/* And nothing is left for the next tracer. */
	ASSERT_EQ(0, bts(PTRACE_ATTACH, pid, 0, 0));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_EQ(0, status(pid).size);
	EXPECT_EQ(0, bts(PTRACE_BTS_SIZE, pid, 0, 0));
	reap(pid);
}

/*
 * The debugger crashes while the tracee is in the signal-delivery-stop of
 * its overflow signal, before it reaped the stop (reaping it with wait(2)
 * would cancel the signal): the signal was for that debugger and must not
 * be delivered to the tracee, whose default action for it is to die.  The
 * debugger did nothing else (@request 0), or emptied or configured the
 * buffer first.  0, the signal the tracee died of, or -(the failed step).
 */
static int overflow_stop_then_exit(long request)
{
	struct bts_struct recs[8];
	pid_t pid, tracer;
	siginfo_t si;
	int st, ret;

	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		busy_sleeper();
	}

	tracer = fork();
	if (!tracer) {
		if (seize_stopped(pid))
			_exit(1);
		if (config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED |
			   PTRACE_BTS_O_SIGNAL, 8 * REC, SIGUSR1))
			_exit(2);
		/* Gone in the overflow's signal-delivery-stop, not reaped. */
		if (bts(PTRACE_CONT, pid, 0, 0) ||
		    waitid(P_PID, pid, &si, WSTOPPED | WNOWAIT) ||
		    si.si_code != CLD_TRAPPED || si.si_status != SIGUSR1)
			_exit(3);
		if (request == PTRACE_BTS_DRAIN &&
		    bts(request, pid, (unsigned long)recs, sizeof(recs)) < 0)
			_exit(4);
		if (request == PTRACE_BTS_CLEAR && bts(request, pid, 0, 0))
			_exit(4);
		if (request == PTRACE_BTS_CONFIG &&
		    config(pid, PTRACE_BTS_O_SCHED | PTRACE_BTS_O_SIGNAL, 0,
			   SIGUSR1))
			_exit(4);
		_exit(0);
	}
	if (tracer < 0 || waitpid(tracer, &st, 0) != tracer || !WIFEXITED(st)) {
		reap(pid);
		return -1;
	}
	if (WEXITSTATUS(st)) {
		reap(pid);
		return -WEXITSTATUS(st);
	}
	ret = death_after(pid, 100000);
	reap(pid);
	return ret;
}

TEST(tracer_exit_in_overflow_stop)
{
	static const long requests[] = {
		0, PTRACE_BTS_DRAIN, PTRACE_BTS_CLEAR, PTRACE_BTS_CONFIG,
	};
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(requests); i++) {
		ret = overflow_stop_then_exit(requests[i]);
		EXPECT_EQ(0, ret)
			TH_LOG("after request %ld, %s %d", requests[i],
			       ret < 0 ? "the tracer failed at step" :
			       "the tracee died of signal after its tracer:",
			       ret < 0 ? -ret : ret);
	}
}

/*
 * A tracer thread that is not the leader executes a program: it takes the
 * leader's thread id and keeps its own tracees and their configuration.
 */
static void *tracer_thread_execs(void *arg)
{
	pid_t pid = *(pid_t *)arg;
	char num[16];
	int st;

	if (bts(PTRACE_ATTACH, pid, 0, 0) || waitpid(pid, &st, __WALL) != pid)
		_exit(10);
	if (config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED, 64 * REC, 0))
		_exit(11);
	snprintf(num, sizeof(num), "%d", pid);
	execl(self_exe, self_exe, "--bts-expect-size", num, "2048", NULL);
	_exit(12);
}

static void busy_child(pid_t *pid)
{
	*pid = fork();
	if (!*pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		busy_sleeper();
	}
}

TEST(exec_in_tracer_thread)
{
	pid_t pid, tracer;
	pthread_t thread;
	int st;

	busy_child(&pid);
	ASSERT_LT(0, pid);
	tracer = fork();
	ASSERT_LE(0, tracer);
	if (!tracer) {
		if (pthread_create(&thread, NULL, tracer_thread_execs, &pid))
			_exit(13);
		pthread_join(thread, NULL);
		_exit(14);
	}
	ASSERT_EQ(tracer, waitpid(tracer, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	reap(pid);
}

/*
 * The leader configures, resumes its tracee and exits alone; a thread
 * then executes a program, which takes the leader's thread id: it must
 * find none of the leader's trace.
 */
static void *exec_after_leader(void *arg)
{
	pid_t pid = *(pid_t *)arg;
	char num[16];

	snprintf(num, sizeof(num), "%d", pid);
	execl(self_exe, self_exe, "--bts-expect-empty", num, NULL);
	_exit(12);
}

TEST(exec_after_tracer_leader_exit)
{
	pid_t pid, tracer;
	pthread_t thread;
	int st;

	busy_child(&pid);
	ASSERT_LT(0, pid);
	tracer = fork();
	ASSERT_LE(0, tracer);
	if (!tracer) {
		if (bts(PTRACE_ATTACH, pid, 0, 0) || waitpid(pid, &st, 0) != pid)
			_exit(10);
		if (config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
			   64 * REC, 0) || bts(PTRACE_CONT, pid, 0, 0))
			_exit(11);
		if (pthread_create(&thread, NULL, exec_after_leader, &pid))
			_exit(13);
		/* The leader alone. */
		syscall(SYS_exit, 0);
	}
	ASSERT_EQ(tracer, waitpid(tracer, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	reap(pid);
}

TEST(tracee_killed_while_draining)
{
	struct bts_struct *r;
	pid_t pid, killer;
	long ret;
	int st;

	pid = spawn(busy_sleeper);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
			    4096 * REC, 0));
	ASSERT_EQ(0, bts(PTRACE_CONT, pid, 0, 0));
	usleep(20000);
	kill(pid, SIGSTOP);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));

	killer = fork();
	ASSERT_LE(0, killer);
	if (!killer) {
		usleep(5000);
		kill(pid, SIGKILL);
		_exit(0);
	}
	r = calloc(4096, REC);
	ASSERT_TRUE(!!r);
	/* Requests succeed until the kill takes the tracee away. */
	do {
		ret = bts(PTRACE_BTS_DRAIN, pid, (unsigned long)r, 4096 * REC);
	} while (ret >= 0);
	EXPECT_EQ(ESRCH, errno);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFSIGNALED(st));
	waitpid(killer, &st, 0);
	free(r);
}

TEST(tracer_killed_while_draining)
{
	pid_t pid, tracer;
	int st;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		busy_sleeper();
	}

	tracer = fork();
	ASSERT_LE(0, tracer);
	if (!tracer) {
		struct bts_struct *r = calloc(4096, REC);

		if (!r || bts(PTRACE_ATTACH, pid, 0, 0) ||
		    waitpid(pid, &st, 0) != pid)
			_exit(1);
		if (config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
			   4096 * REC, 0))
			_exit(2);
		/* Run, stop, drain, until killed. */
		for (;;) {
			if (bts(PTRACE_CONT, pid, 0, 0))
				_exit(3);
			usleep(500);
			kill(pid, SIGSTOP);
			if (waitpid(pid, &st, 0) != pid ||
			    bts(PTRACE_BTS_DRAIN, pid, (unsigned long)r,
				4096 * REC) < 0)
				_exit(4);
		}
	}
	usleep(50000);
	kill(tracer, SIGKILL);
	ASSERT_EQ(tracer, waitpid(tracer, &st, 0));
	ASSERT_TRUE(WIFSIGNALED(st));

	/* The tracee lives on, untraced, and can be traced again. */
	ASSERT_EQ(0, bts(PTRACE_ATTACH, pid, 0, 0));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_EQ(0, status(pid).size);
	ASSERT_EQ(0, config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
			    64 * REC, 0));
	reap(pid);
}

/*
 * A tracer of the other word size: ptrace_bts_32 traces ptrace_bts_64 and
 * the other way round, through the same structures.
 */

static char *other_exe;

static void exec_other(void)
{
	execl(other_exe, other_exe, "--bts-idle", NULL);
	_exit(99);
}

TEST(other_word_size_tracee)
{
	struct bts_struct *r;
	long n;
	pid_t pid;

	if (!other_exe || access(other_exe, X_OK))
		SKIP(return, "no %s next to this program",
		     sizeof(long) == 4 ? "ptrace_bts_64" : "ptrace_bts_32");

	pid = spawn(exec_other);
	ASSERT_LT(0, pid);
	/* The exec's SIGTRAP: the other program is loaded. */
	ASSERT_EQ(SIGTRAP, cont(pid, 0));
	ASSERT_EQ(0, config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
			    64 * REC, 0));
	EXPECT_EQ(PTRACE_BTS_O_SCHED, status(pid).flags);
	EXPECT_EQ(64 * REC, status(pid).size);
	ASSERT_EQ(SIGSTOP, cont(pid, 0));
	n = drain(pid, &r, 64);
	ASSERT_LE(2, n);
	EXPECT_EQ(0, check_switches(r, n, pid, BTS_TASK_ARRIVES));
	free(r);
	reap(pid);
}

/*
 * Privilege and memory.
 */

#define CHILD_CHECK(cond) do {						\
		if (!(cond)) {						\
			fprintf(stderr, "line %d: %s (errno %d)\n",	\
				__LINE__, #cond, errno);		\
			_exit(1);					\
		}							\
	} while (0)

static void become_nobody(void)
{
	CHILD_CHECK(!setgid(NOBODY));
	CHILD_CHECK(!setuid(NOBODY));
	/* Changing credentials made us undumpable: we could not attach. */
	CHILD_CHECK(!prctl(PR_SET_DUMPABLE, 1));
}

static void set_memlock(rlim_t bytes)
{
	struct rlimit rl = { bytes, bytes };

	CHILD_CHECK(!setrlimit(RLIMIT_MEMLOCK, &rl));
}

/* The kernel keeps records in 24 bytes: this many fill @pages. */
#define FITS(pages)	((pages) * 4096 / 24)

static int run_as_nobody(void (*fn)(void))
{
	pid_t pid;
	int st;

	if (getuid() != 0)
		return -1;
	pid = fork();
	if (!pid) {
		become_nobody();
		fn();
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -2;
	return WEXITSTATUS(st);
}

static void memlock_body(void)
{
	pid_t pid;
	int st;

	pid = spawn(sleeper);
	CHILD_CHECK(pid > 0);

	/* Two pages: one buffer of two pages, not two. */
	set_memlock(2 * 4096);
	CHILD_CHECK(config(pid, PTRACE_BTS_O_ALLOC, FITS(3) * REC, 0) == -1);
	CHILD_CHECK(errno == ENOMEM);
	CHILD_CHECK(status(pid).size == 0);
	CHILD_CHECK(!config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
			    FITS(2) * REC, 0));
	CHILD_CHECK(status(pid).size == FITS(2) * REC);

	/* A failed reallocation changes nothing: the recording goes on. */
	CHILD_CHECK(config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
			   FITS(3) * REC, 0) == -1);
	CHILD_CHECK(errno == ENOMEM);
	CHILD_CHECK(status(pid).size == FITS(2) * REC);
	CHILD_CHECK(status(pid).flags == PTRACE_BTS_O_SCHED);
	CHILD_CHECK(cont(pid, 0) == SIGSTOP);
	CHILD_CHECK(bts(PTRACE_BTS_SIZE, pid, 0, 0) > 0);

	/* Freeing gives the pages back. */
	CHILD_CHECK(!config(pid, PTRACE_BTS_O_ALLOC, 0, 0));
	CHILD_CHECK(!config(pid, PTRACE_BTS_O_ALLOC, FITS(2) * REC, 0));

	/* So does the tracee's exit. */
	reap(pid);
	pid = spawn(sleeper);
	CHILD_CHECK(pid > 0);
	CHILD_CHECK(!config(pid, PTRACE_BTS_O_ALLOC, FITS(2) * REC, 0));

	/* And detaching. */
	CHILD_CHECK(!bts(PTRACE_DETACH, pid, 0, 0));
	CHILD_CHECK(!bts(PTRACE_ATTACH, pid, 0, 0));
	CHILD_CHECK(waitpid(pid, &st, 0) == pid);
	CHILD_CHECK(!config(pid, PTRACE_BTS_O_ALLOC, FITS(2) * REC, 0));

	/* No allowance at all: a matter of privilege. */
	CHILD_CHECK(!config(pid, PTRACE_BTS_O_ALLOC, 0, 0));
	set_memlock(0);
	CHILD_CHECK(config(pid, PTRACE_BTS_O_ALLOC, FITS(1) * REC, 0) == -1);
	CHILD_CHECK(errno == EPERM);
	reap(pid);
}

TEST(memlock)
{
	int ret = run_as_nobody(memlock_body);

	if (ret == -1)
		SKIP(return, "needs root to become nobody");
	EXPECT_EQ(0, ret);
}

static void memlock_per_user_body(void)
{
	pid_t a, b, c, other;
	int st;

	set_memlock(2 * 4096);
	a = spawn(sleeper);
	CHILD_CHECK(a > 0);
	CHILD_CHECK(!config(a, PTRACE_BTS_O_ALLOC, FITS(2) * REC, 0));

	/* Another process of the same user: the user's allowance is used. */
	other = fork();
	CHILD_CHECK(other >= 0);
	if (!other) {
		b = spawn(sleeper);
		CHILD_CHECK(b > 0);
		CHILD_CHECK(config(b, PTRACE_BTS_O_ALLOC, FITS(1) * REC, 0) == -1);
		CHILD_CHECK(errno == ENOMEM);
		reap(b);
		_exit(0);
	}
	CHILD_CHECK(waitpid(other, &st, 0) == other && WIFEXITED(st) &&
		    !WEXITSTATUS(st));
	CHILD_CHECK(!config(a, PTRACE_BTS_O_ALLOC, 0, 0));

	/* A tracer that dies without detaching gives the pages back. */
	busy_child(&c);
	CHILD_CHECK(c > 0);
	other = fork();
	CHILD_CHECK(other >= 0);
	if (!other) {
		CHILD_CHECK(!bts(PTRACE_ATTACH, c, 0, 0));
		CHILD_CHECK(waitpid(c, &st, 0) == c);
		CHILD_CHECK(!config(c, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
				    FITS(2) * REC, 0));
		_exit(0);
	}
	CHILD_CHECK(waitpid(other, &st, 0) == other && WIFEXITED(st) &&
		    !WEXITSTATUS(st));
	CHILD_CHECK(!config(a, PTRACE_BTS_O_ALLOC, FITS(2) * REC, 0));
	reap(c);
	reap(a);
}

TEST(memlock_per_user)
{
	int ret = run_as_nobody(memlock_per_user_body);

	if (ret == -1)
		SKIP(return, "needs root to become nobody");
	EXPECT_EQ(0, ret);
}

/*
 * Orphans: the traces of a tracer that died without detaching, given back
 * soon.  A CONFIG that fails for want of what they hold frees the ones in
 * its way only: for its tracee's BTS, that tracee's; for its user's
 * RLIMIT_MEMLOCK allowance, its user's.  Perf gets EBUSY while any trace
 * records branches.
 */
#define ORPHANS		256

/* Hundreds of tracees under KASAN take longer than the default 30 s. */
#define ORPHANS_TIMEOUT	300
FIXTURE(orphans) {};
FIXTURE_SETUP(orphans) {}
FIXTURE_TEARDOWN(orphans) {}

/*
 * 0 if perf could take BTS for this task now, else the errno it got.  A
 * branch event sampled at every branch is perf's BTS event, also where
 * page table isolation keeps the intel_bts PMU away.
 */
static int perf_bts_errno(void)
{
	struct perf_event_attr a = {
		.size = sizeof(a), .type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
		.sample_period = 1, .exclude_kernel = 1, .exclude_hv = 1,
	};
	int fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* Stay root but be charged for locked memory, as a user is. */
static void drop_ipc_lock(void)
{
	struct __user_cap_header_struct head = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	const unsigned int bit = 1u << (CAP_IPC_LOCK % 32);

	CHILD_CHECK(!syscall(SYS_capget, &head, data));
	data[CAP_IPC_LOCK / 32].effective &= ~bit;
	data[CAP_IPC_LOCK / 32].permitted &= ~bit;
	CHILD_CHECK(!syscall(SYS_capset, &head, data));
}

/*
 * A tracer that traces @first and tracees of its own, one page each, and
 * dies.  Its own die with it; their orphans hold BTS until freed all the
 * same.  @first's link goes last: its orphan is the reaper's last.
 */
static void orphan_tracer_body(pid_t first)
{
	pid_t pid = first;
	int i;

	drop_ipc_lock();
	set_memlock(ORPHANS * 4096);
	CHILD_CHECK(!seize_stopped(first));
	for (i = 0; i < ORPHANS; i++) {
		if (i)
			pid = spawn(stop_forever);
		CHILD_CHECK(pid > 0);
		CHILD_CHECK(!config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_TRACE,
				    FITS(1) * REC, 0));
	}
	_exit(0);
}

/*
 * Another user, while root's orphans are there: its own allowance is
 * whole, and a CONFIG over it fails with ENOMEM (after looking for orphans
 * of its own).  Made ready beforehand, it asks when @go says.
 */
static pid_t other_user_memlock(int go)
{
	pid_t other = fork(), pid;
	char c;

	if (other)
		return other;
	become_nobody();
	pid = spawn(sleeper);
	CHILD_CHECK(pid > 0);
	set_memlock(4096);
	CHILD_CHECK(read(go, &c, 1) == 1);
	CHILD_CHECK(!config(pid, PTRACE_BTS_O_ALLOC, FITS(1) * REC, 0));
	CHILD_CHECK(config(pid, PTRACE_BTS_O_ALLOC, FITS(2) * REC, 0) == -1);
	CHILD_CHECK(errno == ENOMEM);
	_exit(0);
}

/* The orphans' user, for the whole allowance: it frees all of them. */
static void whole_memlock_body(void)
{
	pid_t pid = spawn(sleeper);

	CHILD_CHECK(pid > 0);
	drop_ipc_lock();
	set_memlock(ORPHANS * 4096);
	CHILD_CHECK(!config(pid, PTRACE_BTS_O_ALLOC, FITS(ORPHANS) * REC, 0));
	reap(pid);
}

static int run_child(void (*fn)(void))
{
	pid_t pid = fork();
	int st;

	if (!pid) {
		fn();
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -2;
	return WEXITSTATUS(st);
}

/* The number in the file @path, or -1. */
static long long read_number(const char *path)
{
	FILE *f = fopen(path, "r");
	long long val;

	if (!f)
		return -1;
	if (fscanf(f, "%lld", &val) != 1)
		val = -1;
	fclose(f);
	return val;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/*
 * Which orphans a failed CONFIG frees, and that it leaves the others, is
 * for the x86_ptrace_bts KUnit suite: from here, the reaper freeing them
 * meanwhile cannot be told apart from the CONFIG.  A tracer's view is
 * checked here: another user has its whole allowance while root's orphans
 * are there and gets ENOMEM beyond it, a tracee's CONFIG gets the BTS its
 * orphan held, and a CONFIG gets the allowance the orphans held.
 */
TEST_F_TIMEOUT(orphans, free_those_in_the_way, ORPHANS_TIMEOUT)
{
	pid_t first, tracer, other;
	int err, st, i, go[2];

	if (!cpu_has_bts())
		SKIP(return, "this cpu has no BTS");
	if (getuid() != 0)
		SKIP(return, "needs root");
	/* The orphans of earlier tests may still be reaped. */
	for (i = 0; i < 100 && (err = perf_bts_errno()) == EBUSY; i++)
		usleep(100000);
	if (err)
		SKIP(return, "perf cannot take BTS here (errno %d)", err);

	ASSERT_EQ(0, pipe(go));
	other = other_user_memlock(go[0]);
	ASSERT_LT(0, other);
	busy_child(&first);
	ASSERT_LT(0, first);
	tracer = fork();
	ASSERT_LE(0, tracer);
	if (!tracer)
		orphan_tracer_body(first);
	ASSERT_EQ(tracer, waitpid(tracer, &st, 0));
	ASSERT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st));

	ASSERT_EQ(1, write(go[1], "", 1));
	ASSERT_EQ(other, waitpid(other, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st))
		TH_LOG("another user's allowance was not its own");

	ASSERT_EQ(0, seize_stopped(first));
	EXPECT_EQ(0, config(first, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_TRACE,
			    8 * REC, 0))
		TH_LOG("the tracee's orphan kept its BTS: errno %d", errno);
	EXPECT_EQ(0, config(first, PTRACE_BTS_O_ALLOC, 0, 0));

	/* The user whose allowance they hold frees them all, at once. */
	EXPECT_EQ(0, run_child(whole_memlock_body));
	EXPECT_EQ(0, perf_bts_errno())
		TH_LOG("orphans outlived a CONFIG that needed their charge");
	reap(first);
}

/*
 * One CONFIG can want two things orphans hold: its user's allowance, and,
 * once that is freed, its tracee's BTS, which another tracer's orphan
 * holds.  Behind the orphans of many tracees, the reaper is slow to free
 * either.
 */
static pid_t two_wants_tracee;
static struct timespec two_wants_made;

static void two_wants_body(void)
{
	pid_t tracer, pid;
	int st;

	set_memlock(2 * 4096);
	tracer = fork();
	CHILD_CHECK(tracer >= 0);
	if (!tracer) {
		pid = spawn(stop_forever);
		CHILD_CHECK(pid > 0);
		CHILD_CHECK(!config(pid, PTRACE_BTS_O_ALLOC, FITS(2) * REC, 0));
		_exit(0);
	}
	CHILD_CHECK(waitpid(tracer, &st, 0) == tracer && WIFEXITED(st) &&
		    !WEXITSTATUS(st));

	if (seize_stopped(two_wants_tracee)) {
		fprintf(stderr, "seizing %d: errno %d\n", two_wants_tracee, errno);
		_exit(errno == EPERM ? 5 : 1);
	}
	if (config(two_wants_tracee, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_TRACE,
		   FITS(2) * REC, 0))
		_exit(errno == EACCES ? 6 : 1);
	ksft_print_msg("two wants served %ld ms after the orphans were made\n",
		       ms_since(&two_wants_made));
}

TEST_F_TIMEOUT(orphans, free_for_each_want, ORPHANS_TIMEOUT)
{
	pid_t tracer, pid, parent;
	int st, i, ret, ready[2];
	char c;

	if (!cpu_has_bts())
		SKIP(return, "this cpu has no BTS");
	if (getuid() != 0)
		SKIP(return, "needs root to become nobody");

	ASSERT_EQ(0, pipe(ready));
	parent = getpid();
	two_wants_tracee = fork();
	ASSERT_LE(0, two_wants_tracee);
	if (!two_wants_tracee) {
		become_nobody();
		/* After setuid(), which clears it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		/* Where Yama restricts ptrace to descendants. */
		prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY);
		CHILD_CHECK(write(ready[1], "", 1) == 1);
		busy_sleeper();
	}
	/* Nobody's from now on, or nobody could not seize it below. */
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	close(ready[0]);
	/* Root, uncharged, traces it and many tracees of its own. */
	tracer = fork();
	ASSERT_LE(0, tracer);
	if (!tracer) {
		pid = two_wants_tracee;
		CHILD_CHECK(!seize_stopped(pid));
		for (i = 0; i < ORPHANS; i++) {
			if (i)
				pid = spawn(stop_forever);
			CHILD_CHECK(pid > 0);
			if (config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_TRACE,
				   FITS(1) * REC, 0))
				_exit(errno == EBUSY ? 3 : 1);
		}
		_exit(0);
	}
	ASSERT_EQ(tracer, waitpid(tracer, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	if (WEXITSTATUS(st) == 3)
		SKIP(reap(two_wants_tracee); return, "perf is using BTS (EBUSY)");
	ASSERT_EQ(0, WEXITSTATUS(st));
	clock_gettime(CLOCK_MONOTONIC, &two_wants_made);

	ret = run_as_nobody(two_wants_body);
	if (ret == 5 || ret == 6) {
		reap(two_wants_tracee);
		SKIP(return, "nobody may not %s",
		     ret == 5 ? "trace another's process (Yama)" :
				"trace branches (perf_event_paranoid)");
	}
	EXPECT_EQ(0, ret) TH_LOG("a CONFIG gave up after freeing what it wanted first");
	reap(two_wants_tracee);
}

/*
 * A charge counts against the user in every user namespace up to the
 * initial one.  Orphans charged in a child namespace are in the way of
 * their user in the parent, and the other way round.
 */
#define NS_ORPHANS	8

/* A tracer, in a child user namespace or not, that leaves orphans. */
static void ns_orphan_tracer(bool in_child_ns, int go)
{
	pid_t pid;
	char c;
	int i;

	if (in_child_ns && unshare(CLONE_NEWUSER))
		_exit(4);
	for (i = 0; i < NS_ORPHANS; i++) {
		pid = spawn(sleeper);
		CHILD_CHECK(pid > 0);
		CHILD_CHECK(!config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
				    FITS(1) * REC, 0));
	}
	CHILD_CHECK(read(go, &c, 1) == 1);
	_exit(0);
}

static void ns_orphans_body(bool orphans_in_child_ns)
{
	pid_t tracer, pid;
	int go[2], st;
	char c = 0;

	set_memlock(NS_ORPHANS * 4096);
	CHILD_CHECK(!pipe(go));
	tracer = fork();
	CHILD_CHECK(tracer >= 0);
	if (!tracer)
		ns_orphan_tracer(orphans_in_child_ns, go[0]);
	if (!orphans_in_child_ns && unshare(CLONE_NEWUSER)) {
		kill(tracer, SIGKILL);
		_exit(4);
	}
	pid = spawn(sleeper);
	CHILD_CHECK(pid > 0);
	/* The tracer dies without detaching once our tracee is ready. */
	CHILD_CHECK(write(go[1], &c, 1) == 1);
	CHILD_CHECK(waitpid(tracer, &st, 0) == tracer && WIFEXITED(st));
	if (WEXITSTATUS(st) == 4)
		_exit(4);
	CHILD_CHECK(!WEXITSTATUS(st));
	/* The whole allowance: every orphan is in the way. */
	CHILD_CHECK(!config(pid, PTRACE_BTS_O_ALLOC, FITS(NS_ORPHANS) * REC,
			    0));
	reap(pid);
}

static void orphans_in_child_ns_body(void)
{
	ns_orphans_body(true);
}

static void orphans_in_parent_ns_body(void)
{
	ns_orphans_body(false);
}

TEST_F_TIMEOUT(orphans, free_across_user_ns, ORPHANS_TIMEOUT)
{
	int ret = run_as_nobody(orphans_in_child_ns_body);

	if (ret == -1)
		SKIP(return, "needs root to become nobody");
	if (ret == 4)
		SKIP(return, "needs user namespaces");
	EXPECT_EQ(0, ret) TH_LOG("orphans charged in a child namespace");
	EXPECT_EQ(0, run_as_nobody(orphans_in_parent_ns_body))
		TH_LOG("orphans charged in the parent namespace");
}

/* The signals queued for @pid's user, from /proc/PID/status; -1 if unknown. */
static long sigq_of(pid_t pid)
{
	char path[64], line[128];
	long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "SigQ: %ld/", &n) == 1)
			break;
	}
	if (f)
		fclose(f);
	return n;
}

static void failed_config_body(void)
{
	long queued;
	pid_t pid;

	pid = spawn(sleeper);
	CHILD_CHECK(pid > 0);
	set_memlock(2 * 4096);
	queued = sigq_of(pid);
	CHILD_CHECK(queued >= 0);

	/* The signal's memory is set aside by a CONFIG that succeeds only. */
	CHILD_CHECK(config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SIGNAL,
			   FITS(3) * REC, SIGUSR1) == -1);
	CHILD_CHECK(errno == ENOMEM);
	CHILD_CHECK(sigq_of(pid) == queued);
	CHILD_CHECK(!config(pid, PTRACE_BTS_O_ALLOC, FITS(1) * REC, 0));
	CHILD_CHECK(config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SIGNAL,
			   FITS(3) * REC, SIGUSR1) == -1);
	CHILD_CHECK(sigq_of(pid) == queued);
	CHILD_CHECK(status(pid).flags == 0);

	CHILD_CHECK(!config(pid, PTRACE_BTS_O_SIGNAL, 0, SIGUSR1));
	CHILD_CHECK(sigq_of(pid) == queued + 1);
	reap(pid);
}

/* A failing CONFIG leaves no trace, not even the overflow signal's memory. */
TEST(failed_config_keeps_nothing)
{
	int ret = run_as_nobody(failed_config_body);

	if (ret == -1)
		SKIP(return, "needs root to become nobody");
	EXPECT_EQ(0, ret);
}

/* Write @val to the cgroup file @dir/@file; 0 or -1. */
static int cg_write(const char *dir, const char *file, const char *val)
{
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

/* The number in the cgroup file @dir/@file, or -1. */
static long long cg_read(const char *dir, const char *file)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return read_number(path);
}

#define MEMCG_BUFFER	(4 << 20)

/* The tracer, alone in memory cgroup @cg. */
static void memcg_body(const char *cg)
{
	long long before, after;
	char max[32];
	pid_t pid;

	CHILD_CHECK(!cg_write(cg, "cgroup.procs", "0"));
	pid = spawn(sleeper);
	CHILD_CHECK(pid > 0);

	/* The buffer's pages are charged to the tracer's cgroup... */
	before = cg_read(cg, "memory.current");
	CHILD_CHECK(!config(pid, PTRACE_BTS_O_ALLOC, FITS(MEMCG_BUFFER / 4096) * REC, 0));
	after = cg_read(cg, "memory.current");
	CHILD_CHECK(after - before >= MEMCG_BUFFER * 3 / 4);

	/* ...until they are freed. */
	CHILD_CHECK(!config(pid, PTRACE_BTS_O_ALLOC, FITS(1) * REC, 0));
	CHILD_CHECK(after - cg_read(cg, "memory.current") >= MEMCG_BUFFER * 3 / 4);

	/*
	 * Above the cgroup's limit, CONFIG fails as above RLIMIT_MEMLOCK,
	 * the previous buffer stays, and nobody is killed for it.
	 */
	snprintf(max, sizeof(max), "%lld",
		 cg_read(cg, "memory.current") + MEMCG_BUFFER / 4);
	CHILD_CHECK(!cg_write(cg, "memory.max", max));
	CHILD_CHECK(config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
			   FITS(MEMCG_BUFFER / 4096) * REC, 0) == -1);
	CHILD_CHECK(errno == ENOMEM);
	CHILD_CHECK(status(pid).size == FITS(1) * REC);
	CHILD_CHECK(status(pid).flags == 0);
	CHILD_CHECK(!cg_write(cg, "memory.max", "max"));
	CHILD_CHECK(cont(pid, 0) == SIGSTOP);
	reap(pid);
}

/*
 * The buffer is kernel memory a task asked for: its memory cgroup pays
 * for it and limits it.  Needs CONFIG_MEMCG and root to make a cgroup.
 */
TEST(memcg)
{
	char root[] = "/tmp/bts_cgroup_XXXXXX", cg[64];
	const char *why = NULL;
	pid_t tracer;
	int st;

	if (!mkdtemp(root))
		SKIP(return, "mkdtemp: %s", strerror(errno));
	if (mount("none", root, "cgroup2", 0, NULL)) {
		why = "cannot mount cgroup2 (needs root)";
		goto out_dir;
	}
	if (cg_write(root, "cgroup.subtree_control", "+memory")) {
		why = "no memory controller (CONFIG_MEMCG)";
		goto out_mount;
	}
	snprintf(cg, sizeof(cg), "%s/ptrace_bts", root);
	ASSERT_EQ(0, mkdir(cg, 0755));

	tracer = fork();
	ASSERT_GE(tracer, 0);
	if (!tracer) {
		memcg_body(cg);
		_exit(0);
	}
	ASSERT_EQ(tracer, waitpid(tracer, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st))
		TH_LOG("the tracer %s %d", WIFEXITED(st) ? "exited" : "was killed by signal",
		       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	EXPECT_EQ(0, cg_read(cg, "memory.current") > MEMCG_BUFFER / 2)
		TH_LOG("the cgroup still pays for a buffer");
	rmdir(cg);
out_mount:
	umount(root);
out_dir:
	rmdir(root);
	if (why)
		SKIP(return, "%s", why);
}

static void unprivileged_body(void)
{
	unsigned int flags = PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED;
	struct bts_struct *r;
	long n, i;
	pid_t pid;

	/* Someone else's process, not attached: refused. */
	CHILD_CHECK(bts(PTRACE_BTS_SIZE, 1, 0, 0) == -1 && errno == ESRCH);
	CHILD_CHECK(bts(PTRACE_ATTACH, 1, 0, 0) == -1 && errno == EPERM);

	/* Its own tracee: user addresses only, whatever the cpu has. */
	pid = spawn(brancher);
	CHILD_CHECK(pid > 0);
	if (cpu_has_bts())
		flags |= PTRACE_BTS_O_TRACE;
	if (config(pid, flags, 4096 * REC, 0))
		CHILD_CHECK(errno == EBUSY &&
			    !config(pid, PTRACE_BTS_O_ALLOC |
				    PTRACE_BTS_O_SCHED, 4096 * REC, 0));
	CHILD_CHECK(cont(pid, 0) == SIGSTOP);
	n = drain(pid, &r, 4096);
	CHILD_CHECK(n > 0);
	for (i = 0; i < n; i++) {
		CHILD_CHECK(!is_kernel_address(r[i].from));
		CHILD_CHECK(!is_kernel_address(r[i].to));
		CHILD_CHECK(r[i].qualifier != BTS_INVALID);
	}
	free(r);
	reap(pid);
}

TEST(unprivileged)
{
	int ret = run_as_nobody(unprivileged_body);

	if (ret == -1)
		SKIP(return, "needs root to become nobody");
	EXPECT_EQ(0, ret);
}

#define PARANOID	"/proc/sys/kernel/perf_event_paranoid"

static int paranoid_get(void)
{
	int level = -100;
	FILE *f = fopen(PARANOID, "r");

	if (f) {
		if (fscanf(f, "%d", &level) != 1)
			level = -100;
		fclose(f);
	}
	return level;
}

static int paranoid_set(int level)
{
	FILE *f = fopen(PARANOID, "w");
	int ok;

	if (!f)
		return -1;
	ok = fprintf(f, "%d\n", level) > 0;
	return fclose(f) || !ok ? -1 : 0;
}

static void paranoid_body(void)
{
	pid_t pid = spawn(brancher);

	CHILD_CHECK(pid > 0);
	CHILD_CHECK(config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_TRACE,
			   64 * REC, 0) == -1);
	CHILD_CHECK(errno == EACCES);
	CHILD_CHECK(status(pid).size == 0);
	/* Switch records use no hardware: still the tracer's to have. */
	CHILD_CHECK(!config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
			    64 * REC, 0));
	CHILD_CHECK(config(pid, PTRACE_BTS_O_TRACE, 0, 0) == -1);
	CHILD_CHECK(errno == EACCES);
	CHILD_CHECK(status(pid).flags == PTRACE_BTS_O_SCHED);
	reap(pid);
}

/*
 * Branch tracing takes hardware from perf: who may not use perf may not
 * have it (Debian's perf_event_paranoid level 3), but root may.
 */
TEST(trace_needs_perf)
{
	int old = paranoid_get(), ret;
	pid_t pid;

	if (!cpu_has_bts())
		SKIP(return, "this cpu has no BTS");
	if (getuid() != 0 || old == -100)
		SKIP(return, "needs root and %s", PARANOID);
	if (paranoid_set(3))
		SKIP(return, "this kernel has no perf_event_paranoid level 3");
	if (paranoid_get() != 3) {
		paranoid_set(old);
		SKIP(return, "this kernel has no perf_event_paranoid level 3");
	}
	ret = run_as_nobody(paranoid_body);

	pid = spawn(brancher);
	ASSERT_GT(pid, 0);
	if (config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_TRACE, 64 * REC, 0))
		EXPECT_EQ(EBUSY, errno);
	reap(pid);

	paranoid_set(old);
	EXPECT_EQ(0, ret);
}

/*
 * Branches, where the cpu records them.
 */

TEST(known_branches)
{
	int first = -1, second = -1;
	struct bts_struct *r;
	struct branches *b;
	long n, i;
	pid_t pid;

	b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(b != MAP_FAILED);
	shared_branches = b;
	pid = spawn(brancher);
	ASSERT_LT(0, pid);
	if (config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_TRACE, 4096 * REC,
		   0)) {
		reap(pid);
		if (errno == EOPNOTSUPP)
			SKIP(return, "this cpu has no BTS (PTRACE_BTS_O_TRACE: EOPNOTSUPP)");
		if (errno == EBUSY)
			SKIP(return, "perf is using BTS (EBUSY)");
		ASSERT_EQ(0, errno);
	}
	EXPECT_EQ(PTRACE_BTS_O_TRACE, status(pid).flags);
	ASSERT_EQ(SIGSTOP, cont(pid, 0));
	n = drain(pid, &r, 4096);
	ASSERT_LT(0, n);

	for (i = 0; i < n; i++) {
		EXPECT_FALSE(is_kernel_address(r[i].from));
		EXPECT_FALSE(is_kernel_address(r[i].to));
		if (r[i].qualifier != BTS_BRANCH)
			continue;
		if (r[i].from == b->jmp0 && r[i].to == b->jmp1 && first < 0)
			first = i;
		if (r[i].from == b->jmp1 && r[i].to == b->end && first >= 0)
			second = i;
	}
	TH_LOG("%ld records; jmp0 -> jmp1 at %d, jmp1 -> end at %d", n, first,
	       second);
	EXPECT_LE(0, first);
	/* One right after the other: nothing branched in between. */
	EXPECT_EQ(first + 1, second);
	free(r);
	reap(pid);
	munmap(b, sizeof(*b));
}

/* ptrace_bts_64 for ptrace_bts_32 and the other way round. */
static char *sibling(const char *exe)
{
	size_t len = strlen(exe);
	char *other;

	if (len < 3 || (strcmp(exe + len - 3, "_32") &&
			strcmp(exe + len - 3, "_64")))
		return NULL;
	other = strdup(exe);
	if (other)
		memcpy(other + len - 2, sizeof(long) == 4 ? "64" : "32", 2);
	return other;
}

/* After an exec in a tracer thread: the trace of @pid is still ours. */
static int expect_size(pid_t pid, unsigned int size)
{
	struct ptrace_bts_config cfg = status(pid);

	if (cfg.size == size)
		return 0;
	fprintf(stderr, "# after exec: size %u, expected %u\n", cfg.size, size);
	return 1;
}

/* After an exec that took a dead tracer's thread id: nothing of its. */
static int expect_empty(pid_t pid)
{
	struct ptrace_bts_config cfg;
	int st;

	if (bts(PTRACE_ATTACH, pid, 0, 0) || waitpid(pid, &st, 0) != pid)
		return 2;
	cfg = status(pid);
	if (!cfg.size && !cfg.flags && !bts(PTRACE_BTS_SIZE, pid, 0, 0))
		return 0;
	fprintf(stderr, "# the dead leader's trace: size %u, flags %#x, %ld records\n",
		cfg.size, cfg.flags, bts(PTRACE_BTS_SIZE, pid, 0, 0));
	return 1;
}

/*
 * Loss, the overflow signal's identity and the size that fits: what a
 * debugger needs to get every branch and to know when it did not.
 */

/* Whether @pid is in the signal-delivery-stop of its overflow signal. */
static bool overflow_stop(pid_t pid, int sig)
{
	siginfo_t si;

	if (bts(PTRACE_GETSIGINFO, pid, 0, (unsigned long)&si))
		return false;
	return si.si_signo == sig && si.si_code == SI_KERNEL &&
	       si.si_errno == PTRACE_BTS_SI_ERRNO;
}

TEST(overflow_signal_identity)
{
	siginfo_t si;
	pid_t pid;

	pid = spawn(busy_sleeper);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED |
				 PTRACE_BTS_O_SIGNAL, 8 * REC, SIGUSR1));
	ASSERT_EQ(SIGUSR1, cont(pid, 0));
	ASSERT_EQ(0, bts(PTRACE_GETSIGINFO, pid, 0, (unsigned long)&si));
	EXPECT_EQ(SI_KERNEL, si.si_code);
	EXPECT_EQ(ENOBUFS, si.si_errno);
	EXPECT_EQ(PTRACE_BTS_SI_ERRNO, si.si_errno);

	/* Someone else's SIGUSR1 is not the overflow. */
	ASSERT_EQ(0, bts(PTRACE_BTS_CLEAR, pid, 0, 0));
	ASSERT_EQ(0, config(pid, PTRACE_BTS_O_SCHED, 0, 0));
	ASSERT_EQ(0, kill(pid, SIGUSR1));
	ASSERT_EQ(SIGUSR1, cont(pid, 0));
	EXPECT_FALSE(overflow_stop(pid, SIGUSR1));
	reap(pid);
}

TEST(lossless_config_errors)
{
	struct ptrace_bts_config cfg = { .size = 8 * REC };
	unsigned int min = PTRACE_BTS_LOSSLESS_MIN_SIZE;
	pid_t pid;

	ASSERT_EQ(16 * REC, min);
	pid = spawn(sleeper);
	ASSERT_LT(0, pid);
	/* A lossless buffer stops its tracee: it needs O_SIGNAL. */
	EXPECT_EQ(-1, config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED |
				  PTRACE_BTS_O_LOSSLESS, min, 0));
	EXPECT_EQ(EINVAL, errno);
	/* Room for its reserve and the BTS_LOST record. */
	EXPECT_EQ(-1, config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED |
				  PTRACE_BTS_O_SIGNAL | PTRACE_BTS_O_LOSSLESS,
			     min - REC, SIGUSR1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, status(pid).size);
	/* @lost is STATUS's: CONFIG ignores it, STATUS's output goes back. */
	cfg.flags = PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED;
	cfg.lost = 1;
	EXPECT_EQ(0, bts(PTRACE_BTS_CONFIG, pid, (unsigned long)&cfg,
			 sizeof(cfg)));
	EXPECT_EQ(0, status(pid).lost);
	/* A tracer of the first version passes 16 bytes. */
	cfg.size = 4 * REC;
	EXPECT_EQ(0, bts(PTRACE_BTS_CONFIG, pid, (unsigned long)&cfg,
			 PTRACE_BTS_CONFIG_SIZE_VER0));
	EXPECT_EQ(4 * REC, status(pid).size);
	/* Not on a kept buffer that is too small either. */
	EXPECT_EQ(-1, config(pid, PTRACE_BTS_O_SCHED | PTRACE_BTS_O_SIGNAL |
				  PTRACE_BTS_O_LOSSLESS, 0, SIGUSR1));
	EXPECT_EQ(EINVAL, errno);
	/* The least, and LOSSLESS added later. */
	EXPECT_EQ(0, config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
			    min, 0));
	EXPECT_EQ(0, config(pid, PTRACE_BTS_O_SCHED | PTRACE_BTS_O_SIGNAL |
				 PTRACE_BTS_O_LOSSLESS, 0, SIGUSR1));
	EXPECT_EQ(PTRACE_BTS_O_SCHED | PTRACE_BTS_O_SIGNAL |
		  PTRACE_BTS_O_LOSSLESS, status(pid).flags);
	reap(pid);
}

/*
 * A linear buffer whose tracee does not stop (the overflow signal is
 * blocked) drops records: STATUS counts them, and with O_LOSSLESS the
 * records end with a BTS_LOST record that says how many.
 */
#define LOST_RECS	16	/* PTRACE_BTS_LOSSLESS_MIN_SIZE */

static void lost_records(struct __test_metadata *_metadata, bool lossless)
{
	unsigned int flags = PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED |
			     PTRACE_BTS_O_SIGNAL;
	struct {
		struct ptrace_bts_config cfg;
		unsigned char tail[8];
	} st;
	struct bts_struct *r, get;
	long n, nr;
	pid_t pid;

	if (lossless)
		flags |= PTRACE_BTS_O_LOSSLESS;
	pid = spawn(blocked_overflow);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, config(pid, flags, LOST_RECS * REC, SIGUSR1));
	ASSERT_EQ(SIGSTOP, cont(pid, 0));

	ASSERT_EQ(LOST_RECS * REC, status(pid).size);
	n = status(pid).lost;
	TH_LOG("%ld records lost", n);
	ASSERT_LT(0, n);
	/* A tracer of the first version gets 16 bytes, nothing more. */
	memset(&st, 0xa5, sizeof(st));
	ASSERT_EQ(0, bts(PTRACE_BTS_STATUS, pid, (unsigned long)&st,
			 PTRACE_BTS_CONFIG_SIZE_VER0));
	EXPECT_EQ(0xa5a5a5a5a5a5a5a5ULL, st.cfg.lost);

	nr = bts(PTRACE_BTS_SIZE, pid, 0, 0);
	ASSERT_EQ(LOST_RECS, nr);
	ASSERT_EQ(0, bts(PTRACE_BTS_GET, pid, (unsigned long)&get, 0));
	if (lossless) {
		EXPECT_EQ(BTS_LOST, get.qualifier);
		EXPECT_EQ(pid, get.pid);
		EXPECT_EQ(0, get.from);
		EXPECT_EQ(0, get.to);
		EXPECT_EQ(n, get.clock);
	} else {
		EXPECT_NE(BTS_LOST, get.qualifier);
	}

	/* The buffer's size is room enough for a DRAIN, BTS_LOST and all. */
	ASSERT_EQ(LOST_RECS, drain(pid, &r, LOST_RECS));
	EXPECT_EQ(lossless ? BTS_LOST : BTS_TASK_DEPARTS,
		  r[LOST_RECS - 1].qualifier);
	if (lossless)
		EXPECT_EQ(n, r[LOST_RECS - 1].clock);
	EXPECT_EQ(0, check_switches(r, LOST_RECS - lossless, pid,
				    BTS_TASK_ARRIVES));
	free(r);
	/* Emptied: nothing lost since. */
	EXPECT_EQ(0, status(pid).lost);
	EXPECT_EQ(0, bts(PTRACE_BTS_SIZE, pid, 0, 0));
	reap(pid);
}

/*
 * A lossless configuration that keeps a full linear buffer and records
 * nothing keeps the oldest records that leave the last slot free, and
 * counts the rest as lost: a DRAIN of the buffer's size still fits, the
 * BTS_LOST record included.
 */
TEST(lossless_keeps_room_for_lost_record)
{
	struct bts_struct *r;
	long lost;
	pid_t pid;

	pid = spawn(blocked_overflow);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED |
				 PTRACE_BTS_O_SIGNAL, LOST_RECS * REC, SIGUSR1));
	ASSERT_EQ(SIGSTOP, cont(pid, 0));
	ASSERT_EQ(LOST_RECS, bts(PTRACE_BTS_SIZE, pid, 0, 0));
	lost = status(pid).lost;
	ASSERT_LT(0, lost);

	ASSERT_EQ(0, config(pid, PTRACE_BTS_O_SIGNAL | PTRACE_BTS_O_LOSSLESS,
			    0, SIGUSR1));
	EXPECT_EQ(lost + 1, status(pid).lost);
	ASSERT_EQ(LOST_RECS, bts(PTRACE_BTS_SIZE, pid, 0, 0));
	ASSERT_EQ(LOST_RECS, drain(pid, &r, LOST_RECS));
	EXPECT_EQ(BTS_LOST, r[LOST_RECS - 1].qualifier);
	EXPECT_EQ(lost + 1, r[LOST_RECS - 1].clock);
	EXPECT_EQ(0, check_switches(r, LOST_RECS - 1, pid, BTS_TASK_ARRIVES));
	free(r);
	reap(pid);
}

TEST(lost_counted)
{
	lost_records(_metadata, false);
}

TEST(lossless_lost_record)
{
	lost_records(_metadata, true);
}

/*
 * "a size that fits": the kernel charges 24 bytes a record in whole
 * pages, so under a RLIMIT_MEMLOCK of L bytes (a multiple of the page
 * size) the largest buffer is L / 24 records.  The largest size there is,
 * 12 MiB charged, does not fit the common 8 MiB limit.
 */
static void memlock_fits_body(void)
{
	const unsigned int limit = 8 << 20;
	pid_t pid;

	pid = spawn(sleeper);
	CHILD_CHECK(pid > 0);
	set_memlock(limit);
	CHILD_CHECK(config(pid, PTRACE_BTS_O_ALLOC, PTRACE_BTS_SIZE_MAX,
			   0) == -1);
	CHILD_CHECK(errno == ENOMEM);
	CHILD_CHECK(config(pid, PTRACE_BTS_O_ALLOC, (limit / 24 + 1) * REC,
			   0) == -1);
	CHILD_CHECK(errno == ENOMEM);
	CHILD_CHECK(!config(pid, PTRACE_BTS_O_ALLOC, limit / 24 * REC, 0));
	CHILD_CHECK(status(pid).size == limit / 24 * REC);
	reap(pid);
}

TEST(memlock_largest_size)
{
	int ret = run_as_nobody(memlock_fits_body);

	if (ret == -1)
		SKIP(return, "needs root to become nobody");
	EXPECT_EQ(0, ret);
}

/*
 * The loop of lossless_every_branch(): @n - 1 taken back edges from
 * bts_loop_edge to bts_loop_top, then out.  Global labels, so that the
 * tracer, a fork of whose image the tracee runs, knows the addresses.
 */
void bts_loop(unsigned int n);

#ifdef __x86_64__
#define BTS_LOOP_COUNT	"mov %edi, %ecx\n\t"
#else
#define BTS_LOOP_COUNT	"mov 4(%esp), %ecx\n\t"
#endif

asm(".pushsection .text\n\t"
	".globl bts_loop, bts_loop_top, bts_loop_edge\n\t"
	".hidden bts_loop, bts_loop_top, bts_loop_edge\n\t"
	".type bts_loop, @function\n"
	"bts_loop:\n\t"
	BTS_LOOP_COUNT
	"bts_loop_top:\n\t"
	"dec %ecx\n"
	"bts_loop_edge:\n\t"
	"jnz bts_loop_top\n\t"
	"ret\n\t"
	".size bts_loop, . - bts_loop\n\t"
	".popsection");

#define LOOPS		20000

/* The addresses of the labels in bts_loop(). */
static void bts_loop_labels(unsigned long *top, unsigned long *edge)
{
#ifdef __x86_64__
	asm("lea bts_loop_top(%%rip), %0\n\t"
	    "lea bts_loop_edge(%%rip), %1"
	    : "=r" (*top), "=r" (*edge));
#else
	asm("mov $bts_loop_top, %0\n\t"
	    "mov $bts_loop_edge, %1"
	    : "=r" (*top), "=r" (*edge));
#endif
}

static void looper(void)
{
	bts_loop(LOOPS);
	stop_forever();
}

/*
 * With O_LOSSLESS a 64-record buffer, drained at each overflow stop,
 * gives back every branch of a loop of 20000 iterations.  Without it
 * (before it existed) 19497 of the 19999 back edges were dropped: the
 * buffer learnt of them a hardware window at a time.
 */
TEST(lossless_every_branch)
{
	long n, i, edges = 0, stops = 0, lost = 0;
	unsigned long top, edge;
	struct bts_struct *r;
	pid_t pid;
	int sig;

	bts_loop_labels(&top, &edge);

	pid = spawn(looper);
	ASSERT_LT(0, pid);
	if (config(pid, PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_TRACE |
			PTRACE_BTS_O_SIGNAL | PTRACE_BTS_O_LOSSLESS, 64 * REC,
		   SIGRTMIN + 2)) {
		reap(pid);
		if (errno == EOPNOTSUPP)
			SKIP(return, "this cpu has no BTS (PTRACE_BTS_O_TRACE: EOPNOTSUPP)");
		if (errno == EBUSY)
			SKIP(return, "perf is using BTS (EBUSY)");
		ASSERT_EQ(0, errno);
	}

	for (;;) {
		sig = cont(pid, 0);
		ASSERT_LT(0, sig);
		n = drain(pid, &r, 64);
		ASSERT_LE(0, n);
		for (i = 0; i < n; i++) {
			if (r[i].qualifier == BTS_LOST)
				lost += r[i].clock;
			if (r[i].qualifier == BTS_BRANCH &&
			    r[i].from == edge && r[i].to == top)
				edges++;
		}
		free(r);
		if (sig == SIGSTOP)
			break;
		/* Resumed without the signal, as a debugger does. */
		ASSERT_TRUE(overflow_stop(pid, SIGRTMIN + 2))
			TH_LOG("stopped by signal %d", sig);
		stops++;
	}
	EXPECT_EQ(0, status(pid).lost);
	reap(pid);
	TH_LOG("%ld back edges, %ld overflow stops, %ld records lost", edges,
	       stops, lost);
	EXPECT_EQ(0, lost);
	EXPECT_EQ(LOOPS - 1, edges);
	/* A stop at most every 64 records, at least every 56. */
	EXPECT_LE((LOOPS - 1) / 64, stops);
}

/**
 * main() - the tests, or the program the exec_record tracee executes
 * @argc: argument count
 * @argv: arguments; "--bts-idle" for the exec_record tracee,
 *	"--bts-expect-size PID SIZE" and "--bts-expect-empty PID" for the
 *	tracers that execute a program
 *
 * Return: the kselftest harness's exit status.
 */
int main(int argc, char **argv)
{
	/* The program the exec_record tracee executes. */
	if (argc == 2 && !strcmp(argv[1], "--bts-idle"))
		stop_forever();
	if (argc == 4 && !strcmp(argv[1], "--bts-expect-size"))
		return expect_size(atoi(argv[2]), strtoul(argv[3], NULL, 0));
	if (argc == 3 && !strcmp(argv[1], "--bts-expect-empty"))
		return expect_empty(atoi(argv[2]));

	self_exe = realpath("/proc/self/exe", NULL);
	if (!self_exe)
		self_exe = argv[0];
	other_exe = sibling(self_exe);
	return test_harness_run(argc, argv);
}
