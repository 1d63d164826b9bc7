// SPDX-License-Identifier: GPL-2.0
/*
 * Flexible hardware watchpoints, opened with attr.bp_flexible set and not
 * pinned, share the debug registers that the other watchpoints leave free:
 * perf rotates them, so a task can watch more variables than the CPU has
 * registers, each for part of the time.  Pinned watchpoints, and non-pinned
 * ones opened without bp_flexible as every program written before it, keep
 * their register, see every hit, and the fifth of them gets ENOSPC.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest_harness.h"

#define NR_REGS		4	/* DR0-DR3 */
#define NR_FLEX		8
/*
 * The breakpoint PMU rotates flexible groups every perf_event_mux_interval_ms,
 * by default 1000 / HZ ms (PERF_CPU_HRTIMER): 600 ms are 150 rotations at
 * HZ=250 and 600 at HZ=1000.
 */
#define RUN_NS		(600 * 1000 * 1000ULL)

struct bp_read {
	uint64_t value;
	uint64_t enabled;
	uint64_t running;
};

static uint64_t watched[NR_FLEX + NR_REGS];

/* How a watchpoint is opened. */
enum watch_kind {
	WATCH_PLAIN,		/* neither pinned nor flexible: as before bp_flexible */
	WATCH_PINNED,
	WATCH_FLEXIBLE,		/* bp_flexible */
};

static void watch_attr(struct perf_event_attr *attr, uint64_t *addr,
		       enum watch_kind kind, int group_fd)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = PERF_TYPE_BREAKPOINT;
	attr->size = sizeof(*attr);
	attr->bp_type = HW_BREAKPOINT_W;
	attr->bp_addr = (uintptr_t)addr;
	attr->bp_len = HW_BREAKPOINT_LEN_8;
	/* Only a group leader may be pinned. */
	attr->pinned = kind == WATCH_PINNED && group_fd < 0;
	attr->bp_flexible = kind == WATCH_FLEXIBLE;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
	attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
			    PERF_FORMAT_TOTAL_TIME_RUNNING;
}

static int open_attr(struct perf_event_attr *attr, pid_t pid, int cpu,
		     int group_fd)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, 0);
}

static int open_watch_on(uint64_t *addr, enum watch_kind kind, pid_t pid,
			 int cpu, int group_fd)
{
	struct perf_event_attr attr;

	watch_attr(&attr, addr, kind, group_fd);
	return open_attr(&attr, pid, cpu, group_fd);
}

static int open_watch(uint64_t *addr, enum watch_kind kind)
{
	return open_watch_on(addr, kind, 0, -1, -1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Write watched[0..nr-1] in turn for RUN_NS; count the writes of each. */
static void write_loop(int nr, uint64_t *writes)
{
	uint64_t end = now_ns() + RUN_NS;
	uint64_t round = 0;

	do {
		for (int r = 0; r < 64; r++, round++) {
			for (int i = 0; i < nr; i++) {
				watched[i] = round;
				/* One store per write, none merged. */
				asm volatile("" ::: "memory");
				writes[i]++;
			}
		}
	} while (now_ns() < end);
}

static void close_all(int *fds, int nr)
{
	for (int i = 0; i < nr; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

static char skip_reason[128];

/*
 * Open watchpoints on watched[first..first+nr-1].  Return NULL, or why the
 * kernel cannot run the test, having closed what it opened.
 */
static const char *open_watches(struct __test_metadata *_metadata, int *fds,
				int first, int nr, enum watch_kind kind)
{
	for (int i = first; i < first + nr; i++) {
		fds[i] = open_watch(&watched[i], kind);
		if (fds[i] >= 0)
			continue;
		close_all(fds, i);
		if (errno == ENOENT || errno == EACCES || errno == ENODEV ||
		    (errno == EOPNOTSUPP && kind != WATCH_FLEXIBLE)) {
			snprintf(skip_reason, sizeof(skip_reason),
				 "no hardware breakpoints: %s", strerror(errno));
			return skip_reason;
		}
		if (kind == WATCH_FLEXIBLE &&
		    (errno == EINVAL || errno == EOPNOTSUPP)) {
			snprintf(skip_reason, sizeof(skip_reason),
				 "kernel has no flexible breakpoints: bp_flexible got %s",
				 strerror(errno));
			return skip_reason;
		}
		ASSERT_GE(fds[i], 0)
			TH_LOG("watchpoint %d: %s", i + 1, strerror(errno));
	}
	return NULL;
}

static void read_watch(struct __test_metadata *_metadata, int fd,
		       struct bp_read *r)
{
	ASSERT_EQ(sizeof(*r), read(fd, r, sizeof(*r)));
}

static void log_watch(int i, const char *kind, struct bp_read *r,
		      uint64_t writes)
{
	ksft_print_msg("%s watchpoint %d: %llu of %llu writes, running %llu of %llu ns\n",
		       kind, i + 1, (unsigned long long)r->value,
		       (unsigned long long)writes,
		       (unsigned long long)r->running,
		       (unsigned long long)r->enabled);
}

/*
 * Eight flexible watchpoints on eight variables: every one gets turns, counts
 * hits in them and says, through its times, that it ran part time.
 */
TEST(eight_flexible_take_turns)
{
	uint64_t writes[NR_FLEX] = { 0 };
	struct bp_read r;
	int fds[NR_FLEX];
	const char *why;

	why = open_watches(_metadata, fds, 0, NR_FLEX, WATCH_FLEXIBLE);
	if (why)
		SKIP(return, "%s", why);
	write_loop(NR_FLEX, writes);

	for (int i = 0; i < NR_FLEX; i++) {
		read_watch(_metadata, fds[i], &r);
		log_watch(i, "flexible", &r, writes[i]);
		EXPECT_GT(r.value, 0);
		EXPECT_GT(r.running, 0);
		EXPECT_LT(r.running, r.enabled);
	}
	close_all(fds, NR_FLEX);
}

/*
 * No watchpoint counts more hits than its variable had writes, which a debug
 * register or DR7 field left describing another watchpoint after a rotation
 * would cause; and as many flexible watchpoints as registers are never
 * rotated, so they miss no write.
 */
TEST(hits_counted_for_their_variable_only)
{
	uint64_t writes[NR_FLEX] = { 0 };
	struct bp_read r;
	int fds[NR_FLEX];
	const char *why;

	why = open_watches(_metadata, fds, 0, NR_FLEX, WATCH_FLEXIBLE);
	if (why)
		SKIP(return, "%s", why);
	write_loop(NR_FLEX, writes);
	for (int i = 0; i < NR_FLEX; i++) {
		read_watch(_metadata, fds[i], &r);
		log_watch(i, "flexible", &r, writes[i]);
		EXPECT_LE(r.value, writes[i]);
	}
	close_all(fds, NR_FLEX);

	memset(writes, 0, sizeof(writes));
	why = open_watches(_metadata, fds, 0, NR_REGS, WATCH_FLEXIBLE);
	if (why)
		SKIP(return, "%s", why);
	write_loop(NR_REGS, writes);
	for (int i = 0; i < NR_REGS; i++) {
		read_watch(_metadata, fds[i], &r);
		log_watch(i, "flexible", &r, writes[i]);
		EXPECT_EQ(r.value, writes[i]);
	}
	close_all(fds, NR_REGS);
}

/* As many flexible watchpoints as registers: no rotation, no hit missed. */
TEST(flexible_that_fit_miss_no_hit)
{
	uint64_t writes[NR_REGS] = { 0 };
	struct bp_read r;
	int fds[NR_REGS];
	const char *why;

	why = open_watches(_metadata, fds, 0, NR_REGS, WATCH_FLEXIBLE);
	if (why)
		SKIP(return, "%s", why);
	write_loop(NR_REGS, writes);

	for (int i = 0; i < NR_REGS; i++) {
		read_watch(_metadata, fds[i], &r);
		log_watch(i, "flexible", &r, writes[i]);
		EXPECT_GE(r.value, writes[i]);
		EXPECT_EQ(r.running, r.enabled);
	}
	close_all(fds, NR_REGS);
}

/*
 * Three pinned watchpoints and six flexible ones: the pinned ones keep their
 * registers and see every write, the flexible ones take turns on the last.
 */
TEST(pinned_keep_registers_among_flexible)
{
	const int nr_pinned = NR_REGS - 1, nr_flex = 6;
	uint64_t writes[NR_FLEX + NR_REGS] = { 0 };
	int fds[NR_FLEX + NR_REGS];
	struct bp_read r;
	const char *why;

	why = open_watches(_metadata, fds, 0, nr_pinned, WATCH_PINNED);
	if (why)
		SKIP(return, "%s", why);
	why = open_watches(_metadata, fds, nr_pinned, nr_flex, WATCH_FLEXIBLE);
	if (why)
		SKIP(return, "%s", why);
	write_loop(nr_pinned + nr_flex, writes);

	for (int i = 0; i < nr_pinned + nr_flex; i++) {
		read_watch(_metadata, fds[i], &r);
		if (i < nr_pinned) {
			log_watch(i, "pinned", &r, writes[i]);
			EXPECT_EQ(r.value, writes[i]);
			EXPECT_EQ(r.running, r.enabled);
		} else {
			log_watch(i, "flexible", &r, writes[i]);
			EXPECT_GT(r.value, 0);
			EXPECT_GT(r.running, 0);
			EXPECT_LT(r.running, r.enabled);
		}
	}
	close_all(fds, nr_pinned + nr_flex);
}

/*
 * With every register pinned, a fifth pinned watchpoint cannot be sure of a
 * register and a flexible one would never run: both get ENOSPC.
 */
TEST(pinned_full_refuses_more)
{
	int fds[NR_REGS];
	const char *why;
	int fd;

	why = open_watches(_metadata, fds, 0, NR_REGS, WATCH_PINNED);
	if (why)
		SKIP(return, "%s", why);

	fd = open_watch(&watched[NR_REGS], WATCH_PINNED);
	EXPECT_EQ(-1, fd);
	EXPECT_EQ(ENOSPC, errno);
	if (fd >= 0)
		close(fd);

	fd = open_watch(&watched[NR_REGS], WATCH_FLEXIBLE);
	EXPECT_EQ(-1, fd);
	EXPECT_EQ(ENOSPC, errno);
	if (fd >= 0)
		close(fd);

	/* Closing one gives its register back. */
	close(fds[0]);
	fds[0] = -1;
	fd = open_watch(&watched[NR_REGS], WATCH_PINNED);
	EXPECT_GE(fd, 0);
	if (fd >= 0)
		close(fd);
	close_all(fds, NR_REGS);
}

/*
 * A program that does not ask for flexible watchpoints gets what it got
 * before they existed: a non-pinned watchpoint keeps its register, sees
 * every write, and the fifth gets ENOSPC (tools/perf/tests/bp_account.c
 * counts the registers that way).
 */
TEST(plain_fifth_gets_enospc)
{
	uint64_t writes[NR_REGS] = { 0 };
	int fds[NR_REGS];
	struct bp_read r;
	const char *why;
	int fd;

	why = open_watches(_metadata, fds, 0, NR_REGS, WATCH_PLAIN);
	if (why)
		SKIP(return, "%s", why);

	fd = open_watch(&watched[NR_REGS], WATCH_PLAIN);
	EXPECT_EQ(-1, fd)
		TH_LOG("a fifth non-pinned watchpoint without bp_flexible was accepted");
	EXPECT_EQ(ENOSPC, errno);
	if (fd >= 0)
		close(fd);

	write_loop(NR_REGS, writes);
	for (int i = 0; i < NR_REGS; i++) {
		read_watch(_metadata, fds[i], &r);
		log_watch(i, "plain", &r, writes[i]);
		EXPECT_EQ(r.value, writes[i]);
		EXPECT_EQ(r.running, r.enabled);
	}
	close_all(fds, NR_REGS);
}

/* bp_flexible means nothing on an event that is not a breakpoint. */
TEST(bp_flexible_needs_a_breakpoint)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.size = sizeof(attr);
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.bp_flexible = 1;
	fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
	EXPECT_EQ(-1, fd);
	EXPECT_EQ(EINVAL, errno);
	if (fd >= 0)
		close(fd);
}

/*
 * Two watchpoints of a program that did not ask for flexible ones, in a task
 * where eight flexible ones take turns: the two keep their registers all the
 * time and miss no write.
 */
TEST(plain_keep_registers_among_flexible)
{
	const int nr_plain = 2, nr_flex = NR_FLEX;
	uint64_t writes[NR_FLEX + NR_REGS] = { 0 };
	int fds[NR_FLEX + NR_REGS];
	struct bp_read r;
	const char *why;

	why = open_watches(_metadata, fds, 0, nr_plain, WATCH_PLAIN);
	if (why)
		SKIP(return, "%s", why);
	why = open_watches(_metadata, fds, nr_plain, nr_flex, WATCH_FLEXIBLE);
	if (why)
		SKIP(return, "%s", why);
	write_loop(nr_plain + nr_flex, writes);

	for (int i = 0; i < nr_plain + nr_flex; i++) {
		read_watch(_metadata, fds[i], &r);
		if (i < nr_plain) {
			log_watch(i, "plain", &r, writes[i]);
			EXPECT_EQ(r.value, writes[i]);
			EXPECT_EQ(r.running, r.enabled);
		} else {
			log_watch(i, "flexible", &r, writes[i]);
			EXPECT_GT(r.running, 0);
		}
	}
	close_all(fds, nr_plain + nr_flex);
}

/*
 * Open a flexible group of @nr watchpoints on watched[first..]; return how
 * many were accepted, with errno set by the first refusal.
 */
static int open_group(int *fds, int first, int nr)
{
	for (int i = 0; i < nr; i++) {
		fds[first + i] = open_watch_on(&watched[first + i], WATCH_FLEXIBLE,
					       0, -1, i ? fds[first] : -1);
		if (fds[first + i] < 0)
			return i;
	}
	return nr;
}

/* Every member of an accepted group runs, some of the time at least. */
static void expect_all_ran(struct __test_metadata *_metadata, int *fds,
			   int nr, const uint64_t *writes)
{
	struct bp_read r;

	for (int i = 0; i < nr; i++) {
		read_watch(_metadata, fds[i], &r);
		log_watch(i, "flexible", &r, writes[i]);
		EXPECT_GT(r.running, 0)
			TH_LOG("watchpoint %d accepted but never ran", i + 1);
	}
}

/*
 * perf schedules a group whole or not at all: a flexible group of more
 * watchpoints than registers would be accepted and never run, so its fifth
 * member is refused; a group of four runs.
 */
TEST(flexible_group_must_fit)
{
	uint64_t writes[NR_FLEX + NR_REGS] = { 0 };
	int fds[NR_FLEX + NR_REGS];
	int nr;

	memset(fds, -1, sizeof(fds));
	nr = open_group(fds, 0, NR_REGS + 1);
	if (nr == 0 && (errno == EINVAL || errno == EOPNOTSUPP))
		SKIP(return, "kernel has no flexible breakpoints: %s",
		     strerror(errno));
	EXPECT_EQ(NR_REGS, nr)
		TH_LOG("a flexible group of %d watchpoints was accepted", nr);
	if (nr == NR_REGS)
		EXPECT_EQ(ENOSPC, errno);
	write_loop(nr, writes);
	expect_all_ran(_metadata, fds, nr, writes);
	close_all(fds, nr);
}

/*
 * perf schedules a group whole, so its breakpoints are all flexible or none:
 * a plain watchpoint cannot join a flexible leader, nor a flexible one a
 * plain leader.
 */
TEST(flexible_group_all_or_none)
{
	int leader, fd;

	leader = open_watch(&watched[0], WATCH_FLEXIBLE);
	if (leader < 0)
		SKIP(return, "kernel has no flexible breakpoints: %s",
		     strerror(errno));
	fd = open_watch_on(&watched[1], WATCH_PLAIN, 0, -1, leader);
	EXPECT_EQ(-1, fd);
	EXPECT_EQ(EINVAL, errno);
	if (fd >= 0)
		close(fd);
	close(leader);

	leader = open_watch(&watched[0], WATCH_PLAIN);
	ASSERT_GE(leader, 0);
	fd = open_watch_on(&watched[1], WATCH_FLEXIBLE, 0, -1, leader);
	EXPECT_EQ(-1, fd);
	EXPECT_EQ(EINVAL, errno);
	if (fd >= 0)
		close(fd);
	close(leader);
}

/* Open an inherited watchpoint of this task in group @group_fd. */
static int open_inherited(uint64_t *addr, enum watch_kind kind, int group_fd)
{
	struct perf_event_attr attr;

	watch_attr(&attr, addr, kind, group_fd);
	attr.inherit = 1;
	return open_attr(&attr, 0, -1, group_fd);
}

/*
 * A sibling whose leader is closed leads a group of its own, of one
 * watchpoint, and the members that join it later must be counted with it:
 * beside two pinned watchpoints, a flexible group of three led by such a
 * sibling would never run, and fork() would fail to inherit it.  Every member
 * accepted runs, and the task forks.
 */
TEST(promoted_sibling_group_must_fit)
{
	uint64_t writes[NR_FLEX + NR_REGS] = { 0 };
	int fds[NR_FLEX + NR_REGS];
	int leader, nr = 1, status;
	struct bp_read r;
	pid_t child;

	memset(fds, -1, sizeof(fds));
	for (int i = 0; i < 2; i++) {
		fds[i] = open_inherited(&watched[i], WATCH_PINNED, -1);
		if (fds[i] < 0)
			SKIP(return, "no hardware breakpoints: %s", strerror(errno));
	}
	leader = open_inherited(&watched[2], WATCH_FLEXIBLE, -1);
	if (leader < 0) {
		close_all(fds, 2);
		SKIP(return, "kernel has no flexible breakpoints: %s",
		     strerror(errno));
	}
	/* S joins L, then L goes: S leads a group of its own. */
	fds[2] = open_inherited(&watched[3], WATCH_FLEXIBLE, leader);
	ASSERT_GE(fds[2], 0) TH_LOG("sibling: %s", strerror(errno));
	close(leader);

	/* T1 and T2 join S: the group of three must not be accepted. */
	for (int i = 3; i < 5; i++, nr++) {
		fds[i] = open_inherited(&watched[i + 1], WATCH_FLEXIBLE, fds[2]);
		if (fds[i] < 0) {
			ksft_print_msg("member %d of the promoted group: %s\n",
				       nr + 1, strerror(errno));
			EXPECT_EQ(ENOSPC, errno);
			break;
		}
	}
	EXPECT_EQ(2, nr)
		TH_LOG("a group of %d accepted beside 2 pinned", nr);

	child = fork();
	EXPECT_GE(child, 0)
		TH_LOG("fork() with the inherited group: %s", strerror(errno));
	if (child == 0)
		_exit(0);
	if (child > 0) {
		ASSERT_EQ(child, waitpid(child, &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	}

	write_loop(6, writes);
	for (int i = 2; i < 2 + nr; i++) {
		read_watch(_metadata, fds[i], &r);
		log_watch(i, "flexible", &r, writes[i + 1]);
		EXPECT_GT(r.running, 0)
			TH_LOG("member %d accepted but never ran", i - 1);
	}
	close_all(fds, 2 + nr);
}

/*
 * A sibling that perf_event_open() refuses after its slots were counted, here
 * because only a leader may be pinned, must leave its group's count as it
 * was: a group of two is still accepted after three such refusals.
 */
TEST(refused_sibling_leaves_group_count)
{
	uint64_t writes[NR_REGS] = { 0 };
	struct perf_event_attr attr;
	int fds[2] = { -1, -1 };
	struct bp_read r;
	int fd;

	fds[0] = open_watch(&watched[0], WATCH_FLEXIBLE);
	if (fds[0] < 0)
		SKIP(return, "kernel has no flexible breakpoints: %s",
		     strerror(errno));
	for (int i = 0; i < NR_REGS - 1; i++) {
		watch_attr(&attr, &watched[1], WATCH_FLEXIBLE, fds[0]);
		attr.pinned = 1;
		fd = open_attr(&attr, 0, -1, fds[0]);
		EXPECT_EQ(-1, fd);
		EXPECT_EQ(EINVAL, errno);
		if (fd >= 0)
			close(fd);
	}
	fds[1] = open_watch_on(&watched[1], WATCH_FLEXIBLE, 0, -1, fds[0]);
	ASSERT_GE(fds[1], 0)
		TH_LOG("second member after refused ones: %s", strerror(errno));

	write_loop(2, writes);
	for (int i = 0; i < 2; i++) {
		read_watch(_metadata, fds[i], &r);
		log_watch(i, "flexible", &r, writes[i]);
		EXPECT_EQ(r.running, r.enabled);
	}
	close_all(fds, 2);
}

/* Open a counting event of @type and @config in group @group_fd. */
static int open_other(uint32_t type, uint64_t config, int group_fd)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.type = type;
	attr.size = sizeof(attr);
	attr.config = config;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	return open_attr(&attr, 0, -1, group_fd);
}

/* Expect the open that returned @fd to have failed with EINVAL. */
static void expect_einval(struct __test_metadata *_metadata, int fd,
			  const char *what)
{
	EXPECT_EQ(-1, fd) TH_LOG("%s accepted", what);
	if (fd >= 0)
		close(fd);
	else
		EXPECT_EQ(EINVAL, errno) TH_LOG("%s: %s", what, strerror(errno));
}

/*
 * A group with a flexible breakpoint holds only breakpoints: perf would
 * schedule a group with a hardware event in the hardware PMU's context,
 * where the breakpoint accounting does not see it rotate.  The kernel
 * refuses any other event by the leader's attr.bp_flexible alone, so
 * software events, which every machine has, show it for hardware ones too
 * (which would need a PMU that TCG does not emulate fully): they neither
 * join nor lead a flexible group, and a group of reserved breakpoints takes
 * them as it always did.
 */
TEST(flexible_group_breakpoints_only)
{
	int leader, fd;

	leader = open_watch(&watched[0], WATCH_FLEXIBLE);
	if (leader < 0)
		SKIP(return, "kernel has no flexible breakpoints: %s",
		     strerror(errno));
	fd = open_other(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, leader);
	expect_einval(_metadata, fd, "task-clock in a flexible group");
	fd = open_other(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, leader);
	expect_einval(_metadata, fd, "cpu-clock in a flexible group");
	close(leader);

	leader = open_other(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, -1);
	ASSERT_GE(leader, 0) TH_LOG("task-clock: %s", strerror(errno));
	fd = open_watch_on(&watched[0], WATCH_FLEXIBLE, 0, -1, leader);
	expect_einval(_metadata, fd, "flexible breakpoint led by task-clock");
	close(leader);

	/* As before bp_flexible: a reserved breakpoint leads any sibling. */
	leader = open_watch(&watched[0], WATCH_PLAIN);
	ASSERT_GE(leader, 0);
	fd = open_other(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, leader);
	EXPECT_GE(fd, 0) TH_LOG("cpu-clock in a plain group: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
	close(leader);
}

/*
 * With two registers pinned, as a debugger holds them, a flexible group of
 * three would never run: refused.  A group of two and single flexible
 * watchpoints beside it all take turns on the two registers left.
 */
TEST(flexible_group_beside_pinned)
{
	uint64_t writes[NR_FLEX + NR_REGS] = { 0 };
	int fds[NR_FLEX + NR_REGS];
	const char *why;
	int nr;

	memset(fds, -1, sizeof(fds));
	why = open_watches(_metadata, fds, 0, 2, WATCH_PINNED);
	if (why)
		SKIP(return, "%s", why);
	nr = open_group(fds, 2, 3);
	if (nr == 0 && (errno == EINVAL || errno == EOPNOTSUPP)) {
		close_all(fds, 2);
		SKIP(return, "kernel has no flexible breakpoints: %s",
		     strerror(errno));
	}
	EXPECT_EQ(2, nr)
		TH_LOG("a flexible group of %d watchpoints was accepted beside 2 pinned", nr);
	close_all(fds + 2, nr);

	ASSERT_EQ(2, open_group(fds, 2, 2));
	why = open_watches(_metadata, fds, 4, 3, WATCH_FLEXIBLE);
	ASSERT_TRUE(!why);
	write_loop(7, writes);
	expect_all_ran(_metadata, fds, 7, writes);
	close_all(fds, 7);
}

/* Run on CPU 0 only, the old affinity kept in @old.  Return NULL or why not. */
static const char *run_on_cpu0(cpu_set_t *old)
{
	cpu_set_t cpus;

	if (sched_getaffinity(0, sizeof(*old), old)) {
		snprintf(skip_reason, sizeof(skip_reason), "sched_getaffinity: %s",
			 strerror(errno));
		return skip_reason;
	}
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus)) {
		snprintf(skip_reason, sizeof(skip_reason), "cannot run on CPU 0: %s",
			 strerror(errno));
		return skip_reason;
	}
	return NULL;
}

/* After a CPU watchpoint failed to open: why the kernel cannot, or NULL. */
static const char *cpu_watch_refused(void)
{
	if (errno == EACCES || errno == EPERM)
		snprintf(skip_reason, sizeof(skip_reason),
			 "CPU-wide breakpoints need privileges: %s", strerror(errno));
	else if (errno == EINVAL || errno == EOPNOTSUPP || errno == ENOENT ||
		 errno == ENODEV)
		snprintf(skip_reason, sizeof(skip_reason),
			 "kernel has no flexible breakpoints: %s", strerror(errno));
	else
		return NULL;
	return skip_reason;
}

/*
 * perf schedules the flexible events of a CPU before those of the task that
 * runs there.  Eight flexible watchpoints of CPU 0 must not take every
 * register each turn: the four flexible ones of a task running on CPU 0
 * get turns too.
 */
TEST(task_flexible_beside_cpu_flexible)
{
	uint64_t writes[NR_FLEX + NR_REGS] = { 0 };
	int fds[NR_FLEX + NR_REGS];
	const char *why;
	cpu_set_t old;

	memset(fds, -1, sizeof(fds));
	why = run_on_cpu0(&old);
	if (why)
		SKIP(return, "%s", why);

	for (int i = 0; i < NR_FLEX; i++) {
		fds[i] = open_watch_on(&watched[i], WATCH_FLEXIBLE, -1, 0, -1);
		if (fds[i] >= 0)
			continue;
		why = cpu_watch_refused();
		ASSERT_TRUE(!!why)
			TH_LOG("CPU watchpoint %d: %s", i + 1, strerror(errno));
		close_all(fds, i);
		sched_setaffinity(0, sizeof(old), &old);
		SKIP(return, "%s", why);
	}
	why = open_watches(_metadata, fds, NR_FLEX, NR_REGS, WATCH_FLEXIBLE);
	ASSERT_TRUE(!why);

	write_loop(NR_FLEX + NR_REGS, writes);
	expect_all_ran(_metadata, fds, NR_FLEX + NR_REGS, writes);
	close_all(fds, NR_FLEX + NR_REGS);
	sched_setaffinity(0, sizeof(old), &old);
}

/*
 * The slots counted for a CPU's flexible watchpoints are those of its heaviest
 * group.  Four single ones that all fit while a disabled group of four was
 * counted hold every register; once that group is closed, one slot is counted
 * for them, and a task's plain watchpoint is accepted beside them: it must
 * find its register and see every write, not the four still scheduled in.
 */
TEST(cpu_flexible_share_shrinks)
{
	uint64_t writes[NR_FLEX + NR_REGS] = { 0 };
	int fds[NR_FLEX + NR_REGS];
	struct bp_read r;
	const char *why;
	cpu_set_t old;

	memset(fds, -1, sizeof(fds));
	why = run_on_cpu0(&old);
	if (why)
		SKIP(return, "%s", why);

	/* A group of four on CPU 0 that never runs, then four that do. */
	for (int i = 0; i < 2 * NR_REGS; i++) {
		struct perf_event_attr attr;

		watch_attr(&attr, &watched[NR_REGS + i], WATCH_FLEXIBLE, -1);
		attr.disabled = !i;
		fds[i] = open_attr(&attr, -1, 0, i && i < NR_REGS ? fds[0] : -1);
		if (fds[i] >= 0)
			continue;
		why = cpu_watch_refused();
		ASSERT_TRUE(!!why)
			TH_LOG("CPU watchpoint %d: %s", i + 1, strerror(errno));
		close_all(fds, i);
		sched_setaffinity(0, sizeof(old), &old);
		SKIP(return, "%s", why);
	}
	close_all(fds, NR_REGS);

	fds[NR_FLEX] = open_watch(&watched[0], WATCH_PLAIN);
	ASSERT_GE(fds[NR_FLEX], 0)
		TH_LOG("plain watchpoint beside one CPU flexible slot: %s",
		       strerror(errno));
	write_loop(1, writes);
	read_watch(_metadata, fds[NR_FLEX], &r);
	log_watch(0, "plain", &r, writes[0]);
	EXPECT_EQ(writes[0], r.value);
	EXPECT_EQ(r.enabled, r.running);
	close_all(fds, NR_FLEX + 1);
	sched_setaffinity(0, sizeof(old), &old);
}

/* What the parent and the two children of swapped_context_keeps_plain share. */
struct swap_shared {
	int phase;		/* enum swap_phase, see swap_get() */
	uint64_t writes;	/* the writer's writes of watched[0] */
};

enum swap_phase {
	SWAP_SPIN,	/* both children yield to each other on CPU 0 */
	SWAP_WRITE,	/* the writer writes watched[0] once, 64 times */
	SWAP_WRITING,	/* and waits for the parent to read the watchpoint */
	SWAP_WRITE_ON,	/* then writes it for RUN_NS / 4 */
	SWAP_WRITTEN,	/* and has counted its writes */
	SWAP_END,
};

/* The phase, which another process sets. */
static int swap_get(struct swap_shared *sh)
{
	return __atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE);
}

/* Go to @phase, with what was written before it. */
static void swap_set(struct swap_shared *sh, int phase)
{
	__atomic_store_n(&sh->phase, phase, __ATOMIC_RELEASE);
}

/* Write watched[0] 64 times, counting in *@n, and yield. */
static void swap_write(uint64_t *n)
{
	for (int r = 0; r < 64; r++, (*n)++) {
		watched[0] = *n;
		asm volatile("" ::: "memory");
	}
	sched_yield();
}

/*
 * A child of swapped_context_keeps_plain: yield to its sibling on CPU 0 until
 * the end, writing watched[0] meanwhile if it is the @writer.  Still yielding
 * as it writes, so that perf schedules its events out and in again.
 */
static __noreturn void swap_child(struct swap_shared *sh, bool writer)
{
	uint64_t n = 0, end;

	while (swap_get(sh) == SWAP_SPIN)
		sched_yield();
	if (writer) {
		swap_write(&n);
		swap_set(sh, SWAP_WRITING);
		while (swap_get(sh) == SWAP_WRITING)
			sched_yield();
		end = now_ns() + RUN_NS / 4;
		do
			swap_write(&n);
		while (now_ns() < end);
		sh->writes = n;
		swap_set(sh, SWAP_WRITTEN);
	}
	while (swap_get(sh) != SWAP_END)
		sched_yield();
	_exit(0);
}

/*
 * Two children forked with the same four inherited flexible watchpoints have
 * equivalent contexts, which perf swaps rather than schedules when it
 * switches from one to the other: each then runs with the other's copies.  A
 * plain watchpoint opened on one of them goes into the context it holds, and
 * the flexible copies there were made for its sibling: they must leave it a
 * register all the same, so that it sees every write.  Whether the contexts
 * are swapped at the open is chance, so the test opens one in each of
 * several rounds.
 *
 * Its times are compared from the child's first writes on: perf's install
 * of an event on another task that is being switched out right then can
 * date the event's enabled time from before the install, which says
 * nothing of the register it holds afterwards.
 */
TEST(swapped_context_keeps_plain)
{
	int fds[NR_REGS], fd, status, bad = 0;
	struct swap_shared *sh;
	struct bp_read r0, r;
	pid_t kids[2];
	const char *why;
	cpu_set_t old;

	memset(fds, -1, sizeof(fds));
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	for (int i = 0; i < NR_REGS; i++) {
		fds[i] = open_inherited(&watched[NR_REGS + i], WATCH_FLEXIBLE, -1);
		if (fds[i] >= 0)
			continue;
		close_all(fds, i);
		SKIP(return, "kernel has no flexible breakpoints: %s",
		     strerror(errno));
	}

	for (int round = 0; round < 8; round++) {
		sh->writes = 0;
		swap_set(sh, SWAP_SPIN);
		why = run_on_cpu0(&old);
		ASSERT_TRUE(!why) TH_LOG("%s", why);
		for (int k = 0; k < 2; k++) {
			kids[k] = fork();
			ASSERT_GE(kids[k], 0) TH_LOG("fork: %s", strerror(errno));
			if (!kids[k])
				swap_child(sh, k == 1);
		}
		/* The parent watches from elsewhere: only the two swap. */
		sched_setaffinity(0, sizeof(old), &old);
		usleep(10000 + 5000 * round);

		fd = open_watch_on(&watched[0], WATCH_PLAIN, kids[1], -1, -1);
		EXPECT_GE(fd, 0) TH_LOG("plain watchpoint on the child: %s",
					strerror(errno));
		swap_set(sh, SWAP_WRITE);
		while (swap_get(sh) != SWAP_WRITING)
			usleep(1000);
		if (fd >= 0)
			read_watch(_metadata, fd, &r0);
		swap_set(sh, SWAP_WRITE_ON);
		while (swap_get(sh) != SWAP_WRITTEN)
			usleep(1000);
		if (fd >= 0) {
			read_watch(_metadata, fd, &r);
			if (r.value != sh->writes ||
			    r.running - r0.running != r.enabled - r0.enabled) {
				log_watch(0, "plain", &r, sh->writes);
				ksft_print_msg("since the first writes: running %llu of %llu ns\n",
					       (unsigned long long)(r.running - r0.running),
					       (unsigned long long)(r.enabled - r0.enabled));
				bad++;
			}
			close(fd);
		}
		swap_set(sh, SWAP_END);
		for (int k = 0; k < 2; k++) {
			ASSERT_EQ(kids[k], waitpid(kids[k], &status, 0));
			EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
		}
	}
	EXPECT_EQ(0, bad) TH_LOG("%d of 8 rounds missed writes", bad);
	close_all(fds, NR_REGS);
	munmap(sh, sizeof(*sh));
}

/* Write @pid into the cgroup directory @dir; return 0 or -1. */
static int cgroup_enter(const char *dir, pid_t pid)
{
	char path[256], buf[32];
	int fd, len, ret;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	len = snprintf(buf, sizeof(buf), "%d\n", pid);
	ret = write(fd, buf, len) == len ? 0 : -1;
	close(fd);
	return ret;
}

/* Write @what into the cgroup.subtree_control of @dir; 0 or -1. */
static int cgroup_control(const char *dir, const char *what)
{
	char path[256];
	int fd, ret;

	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", dir);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	ret = write(fd, what, strlen(what)) == (ssize_t)strlen(what) ? 0 : -1;
	close(fd);
	return ret;
}

/* Open a pinned watchpoint on CPU 0 for the tasks of cgroup @cg_fd. */
static int open_cgroup_watch(uint64_t *addr, int cg_fd)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_BREAKPOINT;
	attr.size = sizeof(attr);
	attr.bp_type = HW_BREAKPOINT_W;
	attr.bp_addr = (uintptr_t)addr;
	attr.bp_len = HW_BREAKPOINT_LEN_8;
	attr.pinned = 1;
	attr.exclude_kernel = 1;
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
			   PERF_FORMAT_TOTAL_TIME_RUNNING;

	return syscall(__NR_perf_event_open, &attr, cg_fd, 0, -1,
		       PERF_FLAG_PID_CGROUP);
}

static char skip_cgroup[128];

/*
 * Mount cgroup2 on a new directory @root, a "/tmp/bp_cgroup_XXXXXX" template,
 * and make the cgroup @child in it.  Return NULL, or why the kernel cannot,
 * having undone what it did.
 */
static const char *cgroup_make(char *root, char *child, size_t len)
{
	if (!mkdtemp(root)) {
		snprintf(skip_cgroup, sizeof(skip_cgroup), "mkdtemp: %s",
			 strerror(errno));
		return skip_cgroup;
	}
	if (mount("none", root, "cgroup2", 0, NULL)) {
		snprintf(skip_cgroup, sizeof(skip_cgroup),
			 "no cgroup2 to mount: %s", strerror(errno));
		rmdir(root);
		return skip_cgroup;
	}
	/*
	 * A cgroup2 child has perf_event's implicit state only once the
	 * root's subtree_control has changed: enable memory if it is there.
	 */
	cgroup_control(root, "+memory");
	snprintf(child, len, "%s/bp_flexible", root);
	if (mkdir(child, 0755) && errno != EEXIST) {
		snprintf(skip_cgroup, sizeof(skip_cgroup), "mkdir %s: %s",
			 child, strerror(errno));
		umount(root);
		rmdir(root);
		return skip_cgroup;
	}
	return NULL;
}

static void cgroup_remove(const char *root, const char *child)
{
	rmdir(child);
	umount(root);
	rmdir(root);
}

/*
 * A pinned CPU breakpoint of a cgroup keeps its register while a task
 * outside the cgroup has flexible ones installed: when the task moves into
 * the cgroup, perf schedules the CPU's events in again with the task's
 * still in, and the pinned breakpoint must find a register rather than
 * warn and go to the error state.
 */
TEST(cgroup_move_keeps_pinned)
{
	char root[] = "/tmp/bp_cgroup_XXXXXX", child[64];
	uint64_t writes[NR_FLEX + NR_REGS] = { 0 };
	int fds[NR_FLEX + NR_REGS], cg_fd, fd = -1;
	cpu_set_t cpus, old;
	struct bp_read r;
	const char *why;

	memset(fds, -1, sizeof(fds));
	why = cgroup_make(root, child, sizeof(child));
	if (why)
		SKIP(return, "%s", why);
	sched_getaffinity(0, sizeof(old), &old);
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpus), &cpus));

	cg_fd = open(child, O_RDONLY | O_DIRECTORY);
	ASSERT_GE(cg_fd, 0);
	fd = open_cgroup_watch(&watched[NR_FLEX + NR_REGS - 1], cg_fd);
	if (fd < 0) {
		why = strerror(errno);
		close(cg_fd);
		cgroup_remove(root, child);
		sched_setaffinity(0, sizeof(old), &old);
		SKIP(return, "no cgroup breakpoint: %s", why);
	}

	why = open_watches(_metadata, fds, 0, NR_FLEX, WATCH_FLEXIBLE);
	if (!why) {
		/* Run with the flexible ones in, then move into the cgroup. */
		write_loop(NR_FLEX, writes);
		EXPECT_EQ(0, cgroup_enter(child, getpid()))
			TH_LOG("cgroup.procs: %s", strerror(errno));
		watched[NR_FLEX + NR_REGS - 1]++;
		EXPECT_EQ(sizeof(r), read(fd, &r, sizeof(r)))
			TH_LOG("the pinned cgroup breakpoint went to the error state");
		ksft_print_msg("pinned cgroup watchpoint: %llu hits, running %llu of %llu ns\n",
			       (unsigned long long)r.value,
			       (unsigned long long)r.running,
			       (unsigned long long)r.enabled);
		EXPECT_EQ(0, cgroup_enter(root, getpid()));
		close_all(fds, NR_FLEX);
	}
	close(fd);
	close(cg_fd);
	cgroup_remove(root, child);
	sched_setaffinity(0, sizeof(old), &old);
	if (why)
		SKIP(return, "%s", why);
}

/*
 * Run on CPU 0 with NR_REGS flexible watchpoints on watched[0..NR_REGS-1],
 * which fit and are never rotated, writing them and watched[NR_REGS] until
 * killed.  Exit 2 if the kernel has no flexible breakpoints.
 */
static void busy_with_flexible(int ready_fd)
{
	cpu_set_t cpus;
	char c = 0;

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		_exit(1);
	for (int i = 0; i < NR_REGS; i++) {
		if (open_watch(&watched[i], WATCH_FLEXIBLE) < 0)
			_exit(2);
	}
	if (write(ready_fd, &c, 1) != 1)
		_exit(1);
	for (uint64_t round = 0;; round++) {
		for (int i = 0; i <= NR_REGS; i++) {
			watched[i] = round;
			asm volatile("" ::: "memory");
		}
	}
}

/*
 * The same while the task is running: its flexible watchpoints hold every
 * register of CPU 0 when a pinned watchpoint of another cgroup is opened
 * there from CPU 1.  perf does not schedule the task's events again for an
 * event of a cgroup the task is not in, so they must give up the register
 * anyway: when the task then moves into the cgroup, perf schedules only the
 * CPU's events in, and the pinned watchpoint must find a register.
 */
TEST(cgroup_pinned_added_beside_running_task)
{
	char root[] = "/tmp/bp_cgroup_XXXXXX", child[64];
	int ready[2], cg_fd, fd, status;
	cpu_set_t cpus, old;
	struct bp_read r;
	const char *why;
	pid_t pid;
	char c;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs 2 CPUs");
	why = cgroup_make(root, child, sizeof(child));
	if (why)
		SKIP(return, "%s", why);
	sched_getaffinity(0, sizeof(old), &old);
	CPU_ZERO(&cpus);
	CPU_SET(1, &cpus);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpus), &cpus));
	ASSERT_EQ(0, pipe(ready));

	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		close(ready[0]);
		busy_with_flexible(ready[1]);
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1) {
		waitpid(pid, &status, 0);
		close(ready[0]);
		cgroup_remove(root, child);
		sched_setaffinity(0, sizeof(old), &old);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
			SKIP(return, "kernel has no flexible breakpoints");
		ASSERT_TRUE(0) TH_LOG("the busy task failed: status %#x", status);
	}
	close(ready[0]);
	/* Let it run with its watchpoints in on CPU 0. */
	usleep(100 * 1000);

	cg_fd = open(child, O_RDONLY | O_DIRECTORY);
	ASSERT_GE(cg_fd, 0);
	fd = open_cgroup_watch(&watched[NR_REGS], cg_fd);
	if (fd < 0) {
		why = strerror(errno);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		close(cg_fd);
		cgroup_remove(root, child);
		sched_setaffinity(0, sizeof(old), &old);
		SKIP(return, "no cgroup breakpoint: %s", why);
	}
	/* At once: a switch of the task meanwhile would hide the bug. */
	EXPECT_EQ(0, cgroup_enter(child, pid))
		TH_LOG("cgroup.procs: %s", strerror(errno));
	usleep(200 * 1000);

	memset(&r, 0, sizeof(r));
	EXPECT_EQ(sizeof(r), read(fd, &r, sizeof(r)))
		TH_LOG("the pinned cgroup breakpoint went to the error state");
	ksft_print_msg("pinned cgroup watchpoint: %llu hits, running %llu of %llu ns\n",
		       (unsigned long long)r.value,
		       (unsigned long long)r.running,
		       (unsigned long long)r.enabled);
	EXPECT_GT(r.running, 0);
	EXPECT_GT(r.value, 0);

	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(fd);
	close(cg_fd);
	cgroup_remove(root, child);
	sched_setaffinity(0, sizeof(old), &old);
}

/*
 * A reserved watchpoint in a group of another PMU's context: a group led
 * by a software event, or one a hardware event joined, which perf then
 * schedules in the hardware PMU's context (the hardware event stays off
 * here: TCG does not count it, see tools/testing/qemu-bts).  The task's
 * flexible watchpoints hold every register of CPU 0 while the pinned group
 * is enabled, or the watchpoint is installed into it, from CPU 1: perf
 * must schedule the breakpoint PMU's events again too, or the watchpoint
 * finds no register and the pinned group goes to the error state.
 * Return NULL, or why the case cannot run here.
 */
static const char *pinned_group_beside_running_task(struct __test_metadata *_metadata,
						    bool hw_member,
						    bool enable_last)
{
	int ready[2], leader, hw = -1, fd, status;
	struct perf_event_attr attr;
	static char why[96];
	cpu_set_t cpus, old;
	struct bp_read r;
	pid_t pid;
	char c;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return "needs 2 CPUs";
	sched_getaffinity(0, sizeof(old), &old);
	CPU_ZERO(&cpus);
	CPU_SET(1, &cpus);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpus), &cpus)) return NULL;
	ASSERT_EQ(0, pipe(ready)) return NULL;

	pid = fork();
	ASSERT_GE(pid, 0) return NULL;
	if (pid == 0) {
		close(ready[0]);
		busy_with_flexible(ready[1]);
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1) {
		waitpid(pid, &status, 0);
		close(ready[0]);
		sched_setaffinity(0, sizeof(old), &old);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
			return "kernel has no flexible breakpoints";
		ASSERT_TRUE(0) TH_LOG("the busy task failed: status %#x", status);
		return NULL;
	}
	close(ready[0]);

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.size = sizeof(attr);
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.pinned = 1;
	attr.disabled = enable_last;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	leader = open_attr(&attr, pid, -1, -1);
	ASSERT_GE(leader, 0) TH_LOG("task-clock: %s", strerror(errno));
	if (hw_member) {
		attr.type = PERF_TYPE_HARDWARE;
		attr.config = PERF_COUNT_HW_CPU_CYCLES;
		attr.pinned = 0;
		attr.disabled = 1;
		hw = open_attr(&attr, pid, -1, leader);
		if (hw < 0) {
			snprintf(why, sizeof(why), "no hardware cycles event: %s",
				 strerror(errno));
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			close(leader);
			sched_setaffinity(0, sizeof(old), &old);
			return why;
		}
	}
	/* Let the task run with its watchpoints in on CPU 0. */
	usleep(100 * 1000);
	/* Reserved: one register, next to the task's flexible group of one. */
	fd = open_watch_on(&watched[NR_REGS], WATCH_PLAIN, pid, -1, leader);
	ASSERT_GE(fd, 0) TH_LOG("watchpoint in the group: %s", strerror(errno));
	if (enable_last)
		ASSERT_EQ(0, ioctl(leader, PERF_EVENT_IOC_ENABLE, 0));
	usleep(200 * 1000);

	memset(&r, 0, sizeof(r));
	EXPECT_EQ(sizeof(r), read(fd, &r, sizeof(r)))
		TH_LOG("the pinned group went to the error state");
	ksft_print_msg("watchpoint in a pinned %s group, %s: %llu hits, running %llu of %llu ns\n",
		       hw_member ? "task-clock+cycles" : "task-clock",
		       enable_last ? "enabled last" : "installed last",
		       (unsigned long long)r.value,
		       (unsigned long long)r.running,
		       (unsigned long long)r.enabled);
	EXPECT_GT(r.running, 0);
	EXPECT_GT(r.value, 0);

	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(fd);
	if (hw >= 0)
		close(hw);
	close(leader);
	sched_setaffinity(0, sizeof(old), &old);
	return NULL;
}

TEST(software_group_enabled_beside_running_task)
{
	const char *why = pinned_group_beside_running_task(_metadata, false, true);

	if (why)
		SKIP(return, "%s", why);
}

TEST(hardware_group_enabled_beside_running_task)
{
	const char *why = pinned_group_beside_running_task(_metadata, true, true);

	if (why)
		SKIP(return, "%s", why);
}

TEST(hardware_group_installed_beside_running_task)
{
	const char *why = pinned_group_beside_running_task(_metadata, true, false);

	if (why)
		SKIP(return, "%s", why);
}

TEST_HARNESS_MAIN
