// SPDX-License-Identifier: GPL-2.0
/*
 * Cost of creating, inheriting and toggling hardware breakpoints, measured as
 * perf bench breakpoint measures it, without needing perf built for the
 * machine under test:
 *
 *   open_*     perf_event_open() and close() of one breakpoint on the caller,
 *              which reserves and releases its slot;
 *   thread_*   creating and joining a thread that inherits one breakpoint, as
 *              "perf bench breakpoint thread" (inherited breakpoints are
 *              reserved and released for every thread);
 *   enable_*   PERF_EVENT_IOC_ENABLE then _DISABLE of a breakpoint while other
 *              threads hold breakpoints, as "perf bench breakpoint enable";
 *   thread_none  creating and joining a thread with no breakpoint: the part
 *              of thread_* that is not breakpoint code, to read their ratios
 *              against;
 *   open_flexible_at_N  open_flexible while the caller holds N - 1 disabled
 *              flexible breakpoints, so that N = 1000 against N = 5 shows
 *              what the reservation of a breakpoint costs per breakpoint the
 *              task already has (only where flexible breakpoints exist).  They
 *              are disabled so that perf does not schedule them: rescheduling
 *              999 enabled events on every open is perf's own cost, the same
 *              for any PMU, and would hide the reservation's.
 *   open_software_at_N  the same with software events (page faults) in place
 *              of breakpoints, on every kernel: what perf itself spends per
 *              event the task already has, even disabled (it walks the
 *              task's groups to schedule the new one in).  The breakpoint
 *              reservation costs nothing per breakpoint held when
 *              open_flexible_at_1000 - open_flexible_at_5 is no more than
 *              open_software_at_1000 - open_software_at_5: the ratio of the
 *              two is printed.
 *
 * The other keys end in _pinned or _flexible, the kind of breakpoint used:
 * flexible ones set attr.bp_flexible, or are only non-pinned on a kernel that
 * does not know it (that is what they were before it existed).  The
 * measurements run in turn, REPEATS rounds of them, so that a slow spell of
 * the machine hits them alike; each value printed, as "BENCH KEY VALUE" in ns
 * per operation, is the median round.  Rounds differ by what else the machine
 * does meanwhile: timer ticks, RCU callbacks freeing the threads of an earlier
 * round, the load of the host under an emulator.  That makes a few rounds
 * slower and, when it falls between two measurements, a few faster; the median
 * leaves both out.  Run it on two kernels to compare them.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest.h"

#define REPEATS		40
#define OPEN_OPS	500
#define THREAD_OPS	50
#define ENABLE_OPS	500
#define NR_PASSIVE	8
#define HELD_MAX	999

static uint64_t watched[2 + NR_PASSIVE];

/* What is measured: for each kind of breakpoint, then without any. */
enum measure {
	OPEN_PINNED, THREAD_PINNED, ENABLE_PINNED,
	OPEN_FLEXIBLE, THREAD_FLEXIBLE, ENABLE_FLEXIBLE,
	THREAD_NONE, OPEN_SOFTWARE_AT_5, OPEN_SOFTWARE_AT_1000,
	OPEN_FLEXIBLE_AT_5, OPEN_FLEXIBLE_AT_1000, NR_MEASURES
};

static const char * const measure_key[NR_MEASURES] = {
	"open_pinned", "thread_pinned", "enable_pinned",
	"open_flexible", "thread_flexible", "enable_flexible",
	"thread_none", "open_software_at_5", "open_software_at_1000",
	"open_flexible_at_5", "open_flexible_at_1000",
};

/* ns per operation, by measurement and round; the median round */
static uint64_t rounds[NR_MEASURES][REPEATS];
static uint64_t medians[NR_MEASURES];

struct passive {
	pthread_t thread;
	pid_t tid;
	int fd;
};

static pthread_barrier_t passive_ready;
static int passive_pipe[2];
/* The kernel knows attr.bp_flexible. */
static int have_bp_flexible;
/* Events held by open_*_at_N. */
static int held[HELD_MAX];

static int open_watch_disabled(uint64_t *addr, pid_t pid, int pinned,
			       int inherit, int disabled)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_BREAKPOINT;
	attr.size = sizeof(attr);
	attr.bp_type = HW_BREAKPOINT_RW;
	attr.bp_addr = (uintptr_t)addr;
	attr.bp_len = HW_BREAKPOINT_LEN_1;
	attr.pinned = pinned;
	attr.bp_flexible = !pinned && have_bp_flexible;
	attr.inherit = inherit;
	attr.disabled = disabled;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;

	return syscall(__NR_perf_event_open, &attr, pid, -1, -1, 0);
}

static int open_watch(uint64_t *addr, pid_t pid, int pinned, int inherit)
{
	return open_watch_disabled(addr, pid, pinned, inherit, 0);
}

/* open_watch(), or end the benchmark: every caller but the probe needs it. */
static int must_open_watch(uint64_t *addr, pid_t pid, int pinned, int inherit)
{
	int fd = open_watch(addr, pid, pinned, inherit);

	if (fd < 0)
		ksft_exit_fail_msg("perf_event_open: %s\n", strerror(errno));
	return fd;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t bench_open(int pinned)
{
	uint64_t start = now_ns();

	for (int i = 0; i < OPEN_OPS; i++)
		close(must_open_watch(&watched[0], 0, pinned, 0));
	return (now_ns() - start) / OPEN_OPS;
}

static int open_software(int disabled)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.size = sizeof(attr);
	attr.config = PERF_COUNT_SW_PAGE_FAULTS;
	attr.disabled = disabled;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;

	fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0)
		ksft_exit_fail_msg("perf_event_open: %s\n", strerror(errno));
	return fd;
}

/*
 * The open and close of a flexible breakpoint (@software: of a software
 * event) while @nr_held disabled ones are open.
 */
static uint64_t bench_open_at(int nr_held, int software)
{
	uint64_t start, ns;

	for (int i = 0; i < nr_held; i++) {
		held[i] = software ? open_software(1) :
				     open_watch_disabled(&watched[0], 0, 0, 0, 1);
		if (held[i] < 0)
			ksft_exit_fail_msg("perf_event_open: %s\n", strerror(errno));
	}
	start = now_ns();
	for (int i = 0; i < OPEN_OPS; i++)
		close(software ? open_software(0) :
				 must_open_watch(&watched[0], 0, 0, 0));
	ns = (now_ns() - start) / OPEN_OPS;
	for (int i = 0; i < nr_held; i++)
		close(held[i]);
	return ns;
}

static void *idle_thread(void *arg)
{
	return arg;
}

static uint64_t thread_ops(void)
{
	uint64_t start = now_ns();

	for (int i = 0; i < THREAD_OPS; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, idle_thread, NULL))
			ksft_exit_fail_msg("pthread_create failed\n");
		pthread_join(t, NULL);
	}
	return (now_ns() - start) / THREAD_OPS;
}

static uint64_t bench_thread(int pinned)
{
	uint64_t ns;
	int fd;

	fd = must_open_watch(&watched[0], 0, pinned, 1);
	ns = thread_ops();
	close(fd);
	return ns;
}

/* A thread that owns breakpoints but blocks, as perf bench's passive ones. */
static void *passive_thread(void *arg)
{
	struct passive *p = arg;
	char c;

	p->tid = gettid();
	pthread_barrier_wait(&passive_ready);
	if (read(passive_pipe[0], &c, 1) < 0)
		return NULL;
	return NULL;
}

static uint64_t bench_enable(int pinned)
{
	uint64_t start;
	int fd;

	fd = must_open_watch(&watched[1], 0, pinned, 0);
	start = now_ns();
	for (int i = 0; i < ENABLE_OPS; i++) {
		if (ioctl(fd, PERF_EVENT_IOC_DISABLE, 0) ||
		    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0))
			ksft_exit_fail_msg("ioctl: %s\n", strerror(errno));
	}
	start = (now_ns() - start) / ENABLE_OPS;
	close(fd);
	return start;
}

static uint64_t run_enable(int pinned)
{
	struct passive passive[NR_PASSIVE];
	uint64_t ns;
	char c = 0;

	if (pipe(passive_pipe))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	pthread_barrier_init(&passive_ready, NULL, NR_PASSIVE + 1);
	for (int i = 0; i < NR_PASSIVE; i++) {
		if (pthread_create(&passive[i].thread, NULL, passive_thread,
				   &passive[i]))
			ksft_exit_fail_msg("pthread_create failed\n");
	}
	pthread_barrier_wait(&passive_ready);
	for (int i = 0; i < NR_PASSIVE; i++) {
		passive[i].fd = must_open_watch(&watched[2 + i], passive[i].tid,
						pinned, 0);
	}

	ns = bench_enable(pinned);

	for (int i = 0; i < NR_PASSIVE; i++)
		close(passive[i].fd);
	for (int i = 0; i < NR_PASSIVE; i++) {
		if (write(passive_pipe[1], &c, 1) != 1)
			ksft_exit_fail_msg("write: %s\n", strerror(errno));
	}
	for (int i = 0; i < NR_PASSIVE; i++)
		pthread_join(passive[i].thread, NULL);
	pthread_barrier_destroy(&passive_ready);
	close(passive_pipe[0]);
	close(passive_pipe[1]);
	return ns;
}

static int cmp_u64(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

static uint64_t median(uint64_t *values, int n)
{
	qsort(values, n, sizeof(*values), cmp_u64);
	return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/**
 * main() - Measure every key, for pinned then flexible breakpoints, and print
 * the median round of each.
 *
 * Return: 0, or KSFT_SKIP when the kernel has no hardware breakpoints.
 */
int main(void)
{
	struct rlimit files = { HELD_MAX + 64, HELD_MAX + 64 };
	int measures = THREAD_NONE + 1;
	cpu_set_t cpus;
	int fd;

	fd = open_watch(&watched[0], 0, 1, 0);
	if (fd < 0) {
		printf("SKIP no hardware breakpoints: %s\n", strerror(errno));
		return KSFT_SKIP;
	}
	close(fd);

	have_bp_flexible = 1;
	fd = open_watch(&watched[0], 0, 0, 0);
	if (fd < 0) {
		printf("# no attr.bp_flexible (%s): flexible means non-pinned\n",
		       strerror(errno));
		have_bp_flexible = 0;
	} else {
		close(fd);
	}
	if (setrlimit(RLIMIT_NOFILE, &files))
		printf("# no open_*_at_N: setrlimit: %s\n", strerror(errno));
	else if (have_bp_flexible)
		measures = NR_MEASURES;
	else
		measures = OPEN_SOFTWARE_AT_1000 + 1;

	/*
	 * Keep every thread on one CPU: a thread started on another CPU
	 * measures IPIs and the emulator's vCPU scheduling more than the
	 * breakpoint code.
	 */
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		ksft_exit_fail_msg("sched_setaffinity: %s\n", strerror(errno));

	for (int r = 0; r < REPEATS; r++) {
		rounds[THREAD_NONE][r] = thread_ops();
		for (int pinned = 1; pinned >= 0; pinned--) {
			enum measure first = pinned ? OPEN_PINNED : OPEN_FLEXIBLE;

			rounds[first][r] = bench_open(pinned);
			rounds[first + 1][r] = bench_thread(pinned);
			rounds[first + 2][r] = run_enable(pinned);
		}
	}
	/*
	 * Rounds of their own: the thousands of events they free, after an
	 * RCU grace period, would otherwise be freed in the measurements
	 * above.
	 */
	for (int r = 0; r < REPEATS; r++) {
		if (measures > OPEN_SOFTWARE_AT_5) {
			rounds[OPEN_SOFTWARE_AT_5][r] = bench_open_at(4, 1);
			rounds[OPEN_SOFTWARE_AT_1000][r] = bench_open_at(HELD_MAX, 1);
		}
		if (measures > OPEN_FLEXIBLE_AT_5) {
			rounds[OPEN_FLEXIBLE_AT_5][r] = bench_open_at(4, 0);
			rounds[OPEN_FLEXIBLE_AT_1000][r] = bench_open_at(HELD_MAX, 0);
		}
	}

	for (int m = 0; m < measures; m++) {
		medians[m] = median(rounds[m], REPEATS);
		printf("BENCH %s %llu\n", measure_key[m],
		       (unsigned long long)medians[m]);
	}
	if (measures == NR_MEASURES &&
	    medians[OPEN_SOFTWARE_AT_1000] > medians[OPEN_SOFTWARE_AT_5])
		printf("ratio open_at_1000 - open_at_5, flexible/software: %.3f\n",
		       ((double)medians[OPEN_FLEXIBLE_AT_1000] -
			(double)medians[OPEN_FLEXIBLE_AT_5]) /
		       (double)(medians[OPEN_SOFTWARE_AT_1000] -
				medians[OPEN_SOFTWARE_AT_5]));
	return 0;
}
