// SPDX-License-Identifier: GPL-2.0
/*
 * Flexible (non-pinned) hardware watchpoints share the debug registers that
 * pinned ones leave free: perf rotates them, so a task can watch more
 * variables than the CPU has registers, each for part of the time, while
 * pinned watchpoints keep their register and see every hit.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest_harness.h"

#define NR_REGS		4	/* DR0-DR3 */
#define NR_FLEX		8
/* Long enough for hundreds of rotations at the default 1 ms interval. */
#define RUN_NS		(600 * 1000 * 1000ULL)

struct bp_read {
	uint64_t value;
	uint64_t enabled;
	uint64_t running;
};

static uint64_t watched[NR_FLEX + NR_REGS];

static int open_watch(uint64_t *addr, int pinned)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_BREAKPOINT;
	attr.size = sizeof(attr);
	attr.bp_type = HW_BREAKPOINT_W;
	attr.bp_addr = (uintptr_t)addr;
	attr.bp_len = HW_BREAKPOINT_LEN_8;
	attr.pinned = pinned;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
			   PERF_FORMAT_TOTAL_TIME_RUNNING;

	return syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
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
				int first, int nr, int pinned)
{
	for (int i = first; i < first + nr; i++) {
		fds[i] = open_watch(&watched[i], pinned);
		if (fds[i] >= 0)
			continue;
		close_all(fds, i);
		if (errno == ENOENT || errno == EOPNOTSUPP || errno == EACCES ||
		    errno == ENODEV) {
			snprintf(skip_reason, sizeof(skip_reason),
				 "no hardware breakpoints: %s", strerror(errno));
			return skip_reason;
		}
		if (errno == ENOSPC && !pinned && i >= NR_REGS) {
			snprintf(skip_reason, sizeof(skip_reason),
				 "kernel does not multiplex flexible breakpoints: watchpoint %d got ENOSPC",
				 i + 1);
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

	why = open_watches(_metadata, fds, 0, NR_FLEX, 0);
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

	why = open_watches(_metadata, fds, 0, NR_FLEX, 0);
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
	why = open_watches(_metadata, fds, 0, NR_REGS, 0);
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

	why = open_watches(_metadata, fds, 0, NR_REGS, 0);
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

	why = open_watches(_metadata, fds, 0, nr_pinned, 1);
	if (why)
		SKIP(return, "%s", why);
	why = open_watches(_metadata, fds, nr_pinned, nr_flex, 0);
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

	why = open_watches(_metadata, fds, 0, NR_REGS, 1);
	if (why)
		SKIP(return, "%s", why);

	fd = open_watch(&watched[NR_REGS], 1);
	EXPECT_EQ(-1, fd);
	EXPECT_EQ(ENOSPC, errno);
	if (fd >= 0)
		close(fd);

	fd = open_watch(&watched[NR_REGS], 0);
	EXPECT_EQ(-1, fd);
	EXPECT_EQ(ENOSPC, errno);
	if (fd >= 0)
		close(fd);

	/* Closing one gives its register back. */
	close(fds[0]);
	fds[0] = -1;
	fd = open_watch(&watched[NR_REGS], 1);
	EXPECT_GE(fd, 0);
	if (fd >= 0)
		close(fd);
	close_all(fds, NR_REGS);
}

TEST_HARNESS_MAIN
