// SPDX-License-Identifier: GPL-2.0
/*
 * Flexible hardware breakpoints (perf_event_attr::bp_flexible).
 *
 * Written from Documentation/arch/x86/flexible-breakpoints.rst alone, and
 * the uapi headers: each TEST checks one thing that document promises a
 * user program, without reference to the implementation or to its own
 * selftest, so that document and kernel can be held against each other.
 *
 * Every breakpoint watches a variable of this program, in the test's own
 * task, a thread of it or a child of it, so nothing needs privilege but the
 * CPU-wide test, which skips without it.  x86 has four debug address
 * registers, DR0-DR3, and the counts below are written for those four.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>

#include "../kselftest_harness.h"

/* The register counts below, and the ptrace debug register layout, are x86's. */
#if defined(__x86_64__) || defined(__i386)
#define X86 1
#endif

#define NR_REGS		4	/* DR0-DR3 */
#define NR_VARS		16
#define MAX_GROUP	8
/* Every write loop also stops here, whatever the clock says. */
#define MAX_ROUNDS	4000000UL
/* Long enough to count hits of breakpoints that never take turns. */
#define SHORT_MS	50
#define EVENT_SOURCE	"/sys/bus/event_source/devices"
#define MUX_FILE	EVENT_SOURCE "/breakpoint/perf_event_mux_interval_ms"

/* Flags of bp_open() */
#define BP_FLEX		0x1	/* set bp_flexible */
#define BP_PINNED	0x2	/* set pinned: only for a leader */
#define BP_GROUP	0x4	/* PERF_FORMAT_GROUP: read a group at once */
#define BP_RW		0x8	/* HW_BREAKPOINT_RW instead of HW_BREAKPOINT_W */

/*
 * The watched variables.  unsigned long is as long as the breakpoint
 * (8 bytes on x86-64, 4 on i386, where 8-byte breakpoints do not exist)
 * and naturally aligned to it, as x86 requires.
 */
static unsigned long vars[NR_VARS];

/* read() of one event with TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING */
struct count {
	__u64 value;
	__u64 enabled;
	__u64 running;
};

/* read() of a group leader that also has PERF_FORMAT_GROUP */
struct group_count {
	__u64 nr;
	__u64 enabled;
	__u64 running;
	__u64 value[MAX_GROUP];
};

static int open_attr(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd)
{
	int fd;

	fd = syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Opens a breakpoint on @var; returns its fd or the negated errno. */
static int bp_open_on(unsigned long *var, unsigned int flags, pid_t pid, int cpu,
		      int group_fd)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_BREAKPOINT;
	attr.size = sizeof(attr);
	attr.bp_type = (flags & BP_RW) ? HW_BREAKPOINT_RW : HW_BREAKPOINT_W;
	attr.bp_addr = (unsigned long)var;
	attr.bp_len = sizeof(*var) == 8 ? HW_BREAKPOINT_LEN_8 : HW_BREAKPOINT_LEN_4;
	attr.bp_flexible = !!(flags & BP_FLEX);
	attr.pinned = !!(flags & BP_PINNED);
	/* User addresses only, so that perf_event_paranoid 2 lets us watch. */
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	if (flags & BP_GROUP)
		attr.read_format |= PERF_FORMAT_GROUP;
	return open_attr(&attr, pid, cpu, group_fd);
}

/* A breakpoint of the calling task, on any CPU */
static int bp_open(unsigned long *var, unsigned int flags, int group_fd)
{
	return bp_open_on(var, flags, 0, -1, group_fd);
}

/* Any other event of the calling task, with bp_flexible if BP_FLEX */
static int ev_open(__u32 type, __u64 config, unsigned int flags, int group_fd)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.type = type;
	attr.size = sizeof(attr);
	attr.config = config;
	attr.bp_flexible = !!(flags & BP_FLEX);
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	/*
	 * A hardware event stays off: the rules checked with it are decided
	 * when it is opened, and an emulator may advertise counters it cannot
	 * read (QEMU 7.2 TCG has no RDPMC).
	 */
	attr.disabled = type == PERF_TYPE_HARDWARE;
	return open_attr(&attr, 0, -1, group_fd);
}

static int sw_open(unsigned int flags, int group_fd)
{
	return ev_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, flags, group_fd);
}

static int hw_open(unsigned int flags, int group_fd)
{
	return ev_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, flags, group_fd);
}

/*
 * Opens a group of @n breakpoints on @var[0] to @var[n - 1]: all with
 * @flags, but only the leader pinned, since pinned is a leader's attribute.
 * Returns 0, or the negated errno of the first breakpoint refused.
 */
static int open_group(int *fd, unsigned long *var, int n, unsigned int flags)
{
	int i;

	for (i = 0; i < n; i++) {
		fd[i] = bp_open(&var[i], i ? flags & ~BP_PINNED : flags, i ? fd[0] : -1);
		if (fd[i] < 0)
			return fd[i];
	}
	return 0;
}

static int read_count(int fd, struct count *c)
{
	return read(fd, c, sizeof(*c)) == sizeof(*c) ? 0 : -1;
}

static int read_group(int fd, struct group_count *g)
{
	ssize_t len = read(fd, g, sizeof(*g));

	if (len < (ssize_t)(3 * sizeof(__u64)) || g->nr > MAX_GROUP ||
	    len != (ssize_t)((3 + g->nr) * sizeof(__u64)))
		return -1;
	return 0;
}

static unsigned long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000UL + ts.tv_nsec / 1000000;
}

/*
 * Writes each of @v[0] to @v[nr - 1] once per round, for @ms milliseconds
 * or until *@stop is set, and returns the number of whole rounds: the
 * number of hits a breakpoint on one of them can see.
 */
static unsigned long write_vars(unsigned long *v, unsigned int nr, unsigned int ms, int *stop)
{
	unsigned long rounds = 0, end = now_ms() + ms;
	unsigned int i;

	while (rounds < MAX_ROUNDS && now_ms() < end) {
		if (stop && __atomic_load_n(stop, __ATOMIC_ACQUIRE))
			break;
		/* Atomic stores: every write happens, none is merged away. */
		for (i = 0; i < nr; i++)
			__atomic_store_n(&v[i], rounds, __ATOMIC_RELAXED);
		rounds++;
	}
	return rounds;
}

static int read_uint(const char *path, unsigned int *val)
{
	FILE *f = fopen(path, "r");
	int ret;

	if (!f)
		return -1;
	ret = fscanf(f, "%u", val) == 1 ? 0 : -1;
	fclose(f);
	return ret;
}

/*
 * How long to write while flexible breakpoints take turns: many rotation
 * intervals, so that every group gets turns even when the timer is late
 * (as under emulation), but bounded, so the whole test stays short.
 */
static unsigned int window_ms(unsigned int mux_ms)
{
	unsigned int ms = 60 * mux_ms;

	if (ms < 200)
		ms = 200;
	if (ms > 1000)
		ms = 1000;
	return ms;
}

/*
 * Breakpoints that are scheduled in each hold a register, so over a time
 * @enabled, @regs registers give at most @regs * @enabled of running time
 * to share.  1% and 10us of slack for times read one event after another.
 */
static __u64 reg_limit(unsigned int regs, __u64 enabled)
{
	return regs * enabled + regs * enabled / 100 + 10000;
}

/*
 * Stops every event this process opened at once, so that the times read
 * one after the other afterwards belong to the same span.
 */
static int stop_counting(void)
{
	return prctl(PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0);
}

/*
 * Checks, in a child, that this kernel takes bp_flexible: a child so that
 * the probe's breakpoints, whenever they go away, never count against the
 * task under test.  Returns 0, the negated errno of the flexible open, or
 * 128 + errno when not even a reserved breakpoint could be opened.
 */
static int probe_flexible(void)
{
	unsigned long var = 0;
	int status, fd;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return 128 + errno;
	if (pid == 0) {
		fd = bp_open(&var, 0, -1);
		if (fd < 0)
			_exit(128 + (-fd & 127));
		fd = bp_open(&var, BP_FLEX, -1);
		_exit(fd < 0 ? -fd & 127 : 0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 128 + ECHILD;
	status = WEXITSTATUS(status);
	return status >= 128 ? status : -status;
}

FIXTURE(flex)
{
	pid_t child;		/* a process of the test, killed at teardown */
	unsigned int mux_ms;	/* the breakpoint PMU's rotation interval */
};

FIXTURE_SETUP(flex)
{
	int ret;

	self->child = 0;
	ret = probe_flexible();
	if (ret >= 128)
		SKIP(return, "no hardware breakpoint for this task: %s", strerror(ret - 128));
	/* The document: older kernels refuse the bit as any reserved bit. */
	if (ret == -EINVAL)
		SKIP(return, "kernel predates perf_event_attr::bp_flexible (EINVAL)");
	if (ret == -EOPNOTSUPP)
		SKIP(return, "architecture cannot multiplex breakpoints (EOPNOTSUPP)");
	ASSERT_EQ(0, ret) TH_LOG("flexible breakpoint refused: %s", strerror(-ret));
#ifndef X86
	SKIP(return, "the register counts checked here are x86's");
#endif
	/* Documented default: 1000 / HZ ms; 4 ms is HZ=250's. */
	if (read_uint(MUX_FILE, &self->mux_ms) || !self->mux_ms)
		self->mux_ms = 4;
}

FIXTURE_TEARDOWN(flex)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
}

/*
 * "A program that does not set bp_flexible gets exactly what Linux 6.12
 * gave it ...: every breakpoint it gets keeps a register, and the fifth
 * of a task ... gets ENOSPC."
 */
TEST_F(flex, reserved_only_fifth_enospc_every_hit)
{
	unsigned long rounds;
	int fd[NR_REGS], i;
	struct count c;

	for (i = 0; i < NR_REGS; i++) {
		fd[i] = bp_open(&vars[i], i & 1 ? BP_RW : 0, -1);
		ASSERT_LE(0, fd[i]) TH_LOG("reserved breakpoint %d: %s", i, strerror(-fd[i]));
	}
	EXPECT_EQ(-ENOSPC, bp_open(&vars[NR_REGS], 0, -1));

	rounds = write_vars(vars, NR_REGS, SHORT_MS, NULL);
	ASSERT_EQ(0, stop_counting());
	for (i = 0; i < NR_REGS; i++) {
		ASSERT_EQ(0, read_count(fd[i], &c));
		EXPECT_EQ(rounds, c.value) TH_LOG("reserved breakpoint %d missed hits", i);
		/* Keeping its register, it runs whenever it is enabled. */
		EXPECT_GE(c.running * 10, c.enabled * 9)
			TH_LOG("breakpoint %d ran %llu of %llu ns", i, c.running, c.enabled);
	}
}

/*
 * "A debugger or profiler that watches more variables than that can ask
 * perf to multiplex its breakpoints over the registers ...: each then
 * watches for part of the time."  "A flexible breakpoint counts only hits
 * while it is scheduled in, and says how long that was in time_running
 * against time_enabled; every accepted flexible group gets turns."
 */
TEST_F(flex, more_flexible_than_registers_take_turns)
{
	int fd[2 * NR_REGS], i, nr = 2 * NR_REGS;
	struct count c[2 * NR_REGS];
	__u64 enabled = 0, reg_time = 0;
	unsigned long rounds;

	for (i = 0; i < nr; i++) {
		fd[i] = bp_open(&vars[i], BP_FLEX, -1);
		ASSERT_LE(0, fd[i]) TH_LOG("flexible breakpoint %d: %s", i, strerror(-fd[i]));
	}

	rounds = write_vars(vars, nr, window_ms(self->mux_ms), NULL);
	ASSERT_EQ(0, stop_counting());
	for (i = 0; i < nr; i++) {
		ASSERT_EQ(0, read_count(fd[i], &c[i]));
		EXPECT_GT(c[i].running, 0) TH_LOG("breakpoint %d never got a turn", i);
		EXPECT_GT(c[i].value, 0) TH_LOG("breakpoint %d saw no hit", i);
		EXPECT_LE(c[i].value, rounds);
		EXPECT_LE(c[i].running, c[i].enabled);
		reg_time += c[i].running;
		if (c[i].enabled > enabled)
			enabled = c[i].enabled;
	}
	/* Eight cannot all be in four registers: each ran part of the time. */
	EXPECT_LE(reg_time, reg_limit(NR_REGS, enabled))
		TH_LOG("%llu ns of running in %llu ns: more than %d registers", reg_time, enabled,
		       NR_REGS);
}

/*
 * "perf schedules a group whole, so its breakpoints are all flexible or
 * none"; "its other flexible groups take turns on those"; "every accepted
 * flexible group gets turns".  A group of four takes every register, so it
 * and two single breakpoints can only ever run by turns.
 */
TEST_F(flex, flexible_group_of_four_takes_turns_whole)
{
	int grp[NR_REGS], fd[2], i;
	__u64 enabled, reg_time;
	struct group_count g;
	unsigned long rounds;
	struct count c[2];

	ASSERT_EQ(0, open_group(grp, vars, NR_REGS, BP_FLEX | BP_GROUP));
	for (i = 0; i < 2; i++) {
		fd[i] = bp_open(&vars[NR_REGS + i], BP_FLEX, -1);
		ASSERT_LE(0, fd[i]) TH_LOG("single %d next to a group of four: %s", i,
					   strerror(-fd[i]));
	}

	rounds = write_vars(vars, NR_REGS + 2, window_ms(self->mux_ms), NULL);
	ASSERT_EQ(0, stop_counting());
	ASSERT_EQ(0, read_group(grp[0], &g));
	ASSERT_EQ(NR_REGS, g.nr);
	EXPECT_GT(g.running, 0) TH_LOG("the group of four never got a turn");
	for (i = 0; i < NR_REGS; i++) {
		EXPECT_GT(g.value[i], 0) TH_LOG("group member %d saw no hit", i);
		EXPECT_LE(g.value[i], rounds);
	}
	enabled = g.enabled;
	reg_time = NR_REGS * g.running;
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, read_count(fd[i], &c[i]));
		EXPECT_GT(c[i].running, 0) TH_LOG("single %d never got a turn", i);
		EXPECT_GT(c[i].value, 0) TH_LOG("single %d saw no hit", i);
		reg_time += c[i].running;
		if (c[i].enabled > enabled)
			enabled = c[i].enabled;
	}
	/* While the four run together, no single can: they took turns. */
	EXPECT_LE(reg_time, reg_limit(NR_REGS, enabled))
		TH_LOG("%llu ns of running in %llu ns", reg_time, enabled);
}

/*
 * "next to a flexible breakpoint a task can have three reserved ones, and
 * the fourth gets ENOSPC"; the reserved ones see every hit, and "the
 * flexible breakpoints of a task take what ... the task's reserved ones
 * leave".
 */
TEST_F(flex, flexible_then_three_reserved_fourth_enospc)
{
	int flex, fd[NR_REGS - 1], i;
	unsigned long rounds;
	struct count c;

	flex = bp_open(&vars[0], BP_FLEX, -1);
	ASSERT_LE(0, flex);
	for (i = 0; i < NR_REGS - 1; i++) {
		fd[i] = bp_open(&vars[1 + i], 0, -1);
		ASSERT_LE(0, fd[i]) TH_LOG("reserved %d next to a flexible one: %s", i,
					   strerror(-fd[i]));
	}
	EXPECT_EQ(-ENOSPC, bp_open(&vars[NR_REGS], 0, -1));

	rounds = write_vars(vars, NR_REGS, window_ms(self->mux_ms), NULL);
	ASSERT_EQ(0, stop_counting());
	for (i = 0; i < NR_REGS - 1; i++) {
		ASSERT_EQ(0, read_count(fd[i], &c));
		EXPECT_EQ(rounds, c.value) TH_LOG("reserved %d missed hits", i);
	}
	ASSERT_EQ(0, read_count(flex, &c));
	EXPECT_GT(c.running, 0) TH_LOG("the flexible one never ran in the register left");
	EXPECT_GT(c.value, 0);
	EXPECT_LE(c.value, rounds);
}

/*
 * "A task ... needs one register per reserved breakpoint plus as many as
 * its largest flexible group has breakpoints"; "A breakpoint that would
 * break that gets ENOSPC": four reserved leave no register for any
 * flexible group.
 */
TEST_F(flex, flexible_after_four_reserved_enospc)
{
	int fd[NR_REGS], i;

	for (i = 0; i < NR_REGS; i++) {
		fd[i] = bp_open(&vars[i], 0, -1);
		ASSERT_LE(0, fd[i]) TH_LOG("reserved %d: %s", i, strerror(-fd[i]));
	}
	EXPECT_EQ(-ENOSPC, bp_open(&vars[NR_REGS], BP_FLEX, -1));
	EXPECT_EQ(-ENOSPC, bp_open(&vars[NR_REGS], BP_FLEX | BP_GROUP, -1));
}

/*
 * "one register per reserved breakpoint plus as many as its largest
 * flexible group has breakpoints; its other flexible groups take turns on
 * those": two reserved leave two registers, enough for any number of
 * flexible groups of two, which share them, and a third reserved one gets
 * ENOSPC.
 */
TEST_F(flex, largest_flexible_group_sets_the_need)
{
	int res[2], g1[2], g2[2], single, i;
	struct group_count g[2];
	__u64 enabled, reg_time;
	unsigned long rounds;
	struct count c;

	for (i = 0; i < 2; i++) {
		res[i] = bp_open(&vars[i], 0, -1);
		ASSERT_LE(0, res[i]);
	}
	ASSERT_EQ(0, open_group(g1, &vars[2], 2, BP_FLEX | BP_GROUP));
	ASSERT_EQ(0, open_group(g2, &vars[4], 2, BP_FLEX | BP_GROUP));
	single = bp_open(&vars[6], BP_FLEX, -1);
	ASSERT_LE(0, single);
	EXPECT_EQ(-ENOSPC, bp_open(&vars[7], 0, -1))
		TH_LOG("3 reserved + a flexible group of 2 need 5 registers");

	rounds = write_vars(vars, 7, window_ms(self->mux_ms), NULL);
	ASSERT_EQ(0, stop_counting());
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, read_count(res[i], &c));
		EXPECT_EQ(rounds, c.value) TH_LOG("reserved %d missed hits", i);
	}
	ASSERT_EQ(0, read_group(g1[0], &g[0]));
	ASSERT_EQ(0, read_group(g2[0], &g[1]));
	ASSERT_EQ(0, read_count(single, &c));
	enabled = c.enabled;
	reg_time = c.running;
	EXPECT_GT(c.running, 0) TH_LOG("the single flexible breakpoint never ran");
	EXPECT_GT(c.value, 0);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(2, g[i].nr);
		EXPECT_GT(g[i].running, 0) TH_LOG("flexible group %d never ran", i);
		EXPECT_GT(g[i].value[0], 0);
		EXPECT_GT(g[i].value[1], 0);
		reg_time += 2 * g[i].running;
		if (g[i].enabled > enabled)
			enabled = g[i].enabled;
	}
	/* The reserved ones were there first: flexible ones had two registers. */
	EXPECT_LE(reg_time, reg_limit(2, enabled))
		TH_LOG("%llu ns of running in %llu ns on 2 registers", reg_time, enabled);
}

/*
 * "A reserved breakpoint once accepted keeps its register and sees every
 * hit, whatever flexible breakpoints come after it."
 */
TEST_F(flex, reserved_keeps_every_hit_after_flexible_added)
{
	int res[2], grp[2], fd[3], i;
	unsigned long before, after;
	struct group_count g;
	struct count c;

	/* One of each watch type, since both are reserved the same way. */
	res[0] = bp_open(&vars[0], BP_RW, -1);
	res[1] = bp_open(&vars[1], 0, -1);
	ASSERT_LE(0, res[0]);
	ASSERT_LE(0, res[1]);
	before = write_vars(vars, 2, SHORT_MS, NULL);

	ASSERT_EQ(0, open_group(grp, &vars[2], 2, BP_FLEX | BP_GROUP));
	for (i = 0; i < 3; i++) {
		fd[i] = bp_open(&vars[4 + i], BP_FLEX, -1);
		ASSERT_LE(0, fd[i]);
	}
	after = write_vars(vars, 7, window_ms(self->mux_ms), NULL);
	ASSERT_EQ(0, stop_counting());

	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, read_count(res[i], &c));
		EXPECT_EQ(before + after, c.value) TH_LOG("reserved %d missed hits", i);
		EXPECT_GE(c.running * 10, c.enabled * 9)
			TH_LOG("reserved %d ran %llu of %llu ns", i, c.running, c.enabled);
	}
	ASSERT_EQ(0, read_group(grp[0], &g));
	EXPECT_GT(g.running, 0);
	EXPECT_GT(g.value[0], 0);
	EXPECT_GT(g.value[1], 0);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, read_count(fd[i], &c));
		EXPECT_GT(c.running, 0) TH_LOG("flexible %d never ran", i);
		EXPECT_GT(c.value, 0);
	}
}

/* "bp_flexible is refused with: EINVAL on an event that is not a breakpoint." */
TEST_F(flex, not_a_breakpoint_einval)
{
	int fd;

	EXPECT_EQ(-EINVAL, sw_open(BP_FLEX, -1));
	EXPECT_EQ(-EINVAL, ev_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, BP_FLEX, -1));
	/* Without the bit the same event opens: the bit is what is refused. */
	fd = sw_open(0, -1);
	EXPECT_LE(0, fd) TH_LOG("task-clock: %s", strerror(-fd));

	fd = hw_open(0, -1);
	if (fd < 0) {
		TH_LOG("no hardware event here (%s): software events only", strerror(-fd));
		return;
	}
	EXPECT_EQ(-EINVAL, hw_open(BP_FLEX, -1));
}

/*
 * "when the leader sets it, every member must be a breakpoint ... that sets
 * it too, and any other event, a software or hardware one included, gets
 * EINVAL"
 */
TEST_F(flex, flexible_leader_software_member_einval)
{
	int lead, fd;

	lead = bp_open(&vars[0], BP_FLEX, -1);
	ASSERT_LE(0, lead);
	EXPECT_EQ(-EINVAL, sw_open(0, lead));
	EXPECT_EQ(-EINVAL, sw_open(BP_FLEX, lead));
	EXPECT_EQ(-EINVAL, ev_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, 0, lead));
	/* The refusals leave the group open to what it may take. */
	fd = bp_open(&vars[1], BP_FLEX, lead);
	EXPECT_LE(0, fd) TH_LOG("flexible member: %s", strerror(-fd));
}

/* The same rule, for a hardware event ("a software or hardware one included") */
TEST_F(flex, flexible_leader_hardware_member_einval)
{
	int lead, fd;

	/* Without a PMU (as under emulation) there is no hardware event to refuse. */
	fd = hw_open(0, -1);
	if (fd < 0)
		SKIP(return, "no hardware event to try: %s", strerror(-fd));
	close(fd);

	lead = bp_open(&vars[0], BP_FLEX, -1);
	ASSERT_LE(0, lead);
	EXPECT_EQ(-EINVAL, hw_open(0, lead));
	EXPECT_EQ(-EINVAL, hw_open(BP_FLEX, lead));
}

/* "every member must be a breakpoint ... that sets it too" */
TEST_F(flex, flexible_leader_reserved_member_einval)
{
	int lead, fd;

	lead = bp_open(&vars[0], BP_FLEX, -1);
	ASSERT_LE(0, lead);
	EXPECT_EQ(-EINVAL, bp_open(&vars[1], 0, lead));
	EXPECT_EQ(-EINVAL, bp_open(&vars[1], BP_RW, lead));
	fd = bp_open(&vars[1], BP_FLEX, lead);
	EXPECT_LE(0, fd) TH_LOG("flexible member: %s", strerror(-fd));
}

/* "when the leader does not set it, a member that sets it gets EINVAL" */
TEST_F(flex, reserved_leader_flexible_member_einval)
{
	int lead, fd;

	lead = bp_open(&vars[0], 0, -1);
	ASSERT_LE(0, lead);
	EXPECT_EQ(-EINVAL, bp_open(&vars[1], BP_FLEX, lead));

	lead = sw_open(0, -1);
	ASSERT_LE(0, lead);
	EXPECT_EQ(-EINVAL, bp_open(&vars[1], BP_FLEX, lead));

	/* Sanity: the same member on its own is a flexible breakpoint. */
	fd = bp_open(&vars[1], BP_FLEX, -1);
	EXPECT_LE(0, fd);

	lead = hw_open(0, -1);
	if (lead < 0) {
		TH_LOG("no hardware event here (%s): no hardware leader", strerror(-lead));
		return;
	}
	EXPECT_EQ(-EINVAL, bp_open(&vars[2], BP_FLEX, lead));
}

/* "every member must be a breakpoint of the same task and CPU" */
TEST_F(flex, flexible_member_other_task_or_cpu_einval)
{
	int lead;

	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0) {
		pause();
		_exit(0);
	}

	lead = bp_open(&vars[0], BP_FLEX, -1);
	ASSERT_LE(0, lead);
	EXPECT_EQ(-EINVAL, bp_open_on(&vars[1], BP_FLEX, self->child, -1, lead))
		TH_LOG("member on another task");
	EXPECT_EQ(-EINVAL, bp_open_on(&vars[1], BP_FLEX, 0, 0, lead))
		TH_LOG("member on the same task, on CPU 0 only");
}

/* "Groups whose leader does not set it take any event as before." */
TEST_F(flex, reserved_leader_takes_any_event)
{
	int lead, fd;

	lead = bp_open(&vars[0], 0, -1);
	ASSERT_LE(0, lead);
	fd = sw_open(0, lead);
	EXPECT_LE(0, fd) TH_LOG("software member: %s", strerror(-fd));
	fd = bp_open(&vars[1], 0, lead);
	EXPECT_LE(0, fd) TH_LOG("reserved breakpoint member: %s", strerror(-fd));

	lead = sw_open(0, -1);
	ASSERT_LE(0, lead);
	fd = bp_open(&vars[2], 0, lead);
	EXPECT_LE(0, fd) TH_LOG("reserved breakpoint under a software leader: %s",
				strerror(-fd));
}

/*
 * "a flexible group that could never be scheduled whole, five flexible
 * breakpoints in one group ..., is refused when its member is opened
 * rather than accepted and never run."
 */
TEST_F(flex, five_in_a_flexible_group_enospc)
{
	struct group_count g;
	unsigned long rounds;
	int grp[NR_REGS], i;

	ASSERT_EQ(0, open_group(grp, vars, NR_REGS, BP_FLEX | BP_GROUP));
	EXPECT_EQ(-ENOSPC, bp_open(&vars[NR_REGS], BP_FLEX | BP_GROUP, grp[0]));

	/* The four accepted are scheduled: the refusal left them whole. */
	rounds = write_vars(vars, NR_REGS + 1, window_ms(self->mux_ms), NULL);
	ASSERT_EQ(0, stop_counting());
	ASSERT_EQ(0, read_group(grp[0], &g));
	ASSERT_EQ(NR_REGS, g.nr);
	EXPECT_GT(g.running, 0);
	for (i = 0; i < NR_REGS; i++) {
		EXPECT_GT(g.value[i], 0) TH_LOG("member %d saw no hit", i);
		EXPECT_LE(g.value[i], rounds);
	}
}

/* "... or three next to two reserved ones, is refused when its member is opened" */
TEST_F(flex, three_in_a_flexible_group_next_to_two_reserved_enospc)
{
	int res[2], grp[2], i;

	for (i = 0; i < 2; i++) {
		res[i] = bp_open(&vars[i], 0, -1);
		ASSERT_LE(0, res[i]);
	}
	ASSERT_EQ(0, open_group(grp, &vars[2], 2, BP_FLEX | BP_GROUP));
	EXPECT_EQ(-ENOSPC, bp_open(&vars[4], BP_FLEX | BP_GROUP, grp[0]));
}

/*
 * "Flexible breakpoints ... hold registers too, as many as their largest
 * group has breakpoints": after a flexible group of three, one reserved
 * breakpoint fits and a second does not; another group of three still
 * fits, a group of four no longer does.
 */
TEST_F(flex, flexible_group_holds_registers)
{
	int g1[3], g2[3], g3[NR_REGS], res;

	ASSERT_EQ(0, open_group(g1, vars, 3, BP_FLEX | BP_GROUP));
	res = bp_open(&vars[3], 0, -1);
	ASSERT_LE(0, res) TH_LOG("reserved next to a flexible group of 3: %s", strerror(-res));
	EXPECT_EQ(-ENOSPC, bp_open(&vars[4], 0, -1));
	EXPECT_EQ(0, open_group(g2, &vars[5], 3, BP_FLEX | BP_GROUP));
	EXPECT_EQ(-ENOSPC, open_group(g3, &vars[8], NR_REGS, BP_FLEX | BP_GROUP));
}

/*
 * "A leader that sets both bp_flexible and pinned leads a pinned group:
 * its breakpoints are reserved".  Counted as flexible, a group of two
 * would leave room for flexible singles next to two reserved breakpoints;
 * counted as reserved, the four registers are spoken for.
 */
TEST_F(flex, pinned_flexible_group_is_reserved)
{
	int grp[2], res[2], i;
	struct group_count g;
	unsigned long rounds;
	struct count c;

	ASSERT_EQ(0, open_group(grp, vars, 2, BP_FLEX | BP_PINNED | BP_GROUP));
	for (i = 0; i < 2; i++) {
		res[i] = bp_open(&vars[2 + i], 0, -1);
		ASSERT_LE(0, res[i]) TH_LOG("reserved %d: %s", i, strerror(-res[i]));
	}
	EXPECT_EQ(-ENOSPC, bp_open(&vars[4], BP_FLEX, -1));
	EXPECT_EQ(-ENOSPC, bp_open(&vars[4], 0, -1));

	/* Reserved, they keep their registers and see every hit. */
	rounds = write_vars(vars, 4, SHORT_MS, NULL);
	ASSERT_EQ(0, stop_counting());
	ASSERT_EQ(0, read_group(grp[0], &g));
	ASSERT_EQ(2, g.nr);
	EXPECT_EQ(rounds, g.value[0]);
	EXPECT_EQ(rounds, g.value[1]);
	EXPECT_GE(g.running * 10, g.enabled * 9);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, read_count(res[i], &c));
		EXPECT_EQ(rounds, c.value);
	}
}

/* "A leader that sets both ... leads a pinned group: ... its members must still set the bit." */
TEST_F(flex, pinned_flexible_leader_members_set_the_bit)
{
	int lead, fd;

	lead = bp_open(&vars[0], BP_FLEX | BP_PINNED, -1);
	ASSERT_LE(0, lead);
	EXPECT_EQ(-EINVAL, bp_open(&vars[1], 0, lead));
	EXPECT_EQ(-EINVAL, sw_open(0, lead));
	fd = bp_open(&vars[1], BP_FLEX, lead);
	EXPECT_LE(0, fd) TH_LOG("flexible member of a pinned group: %s", strerror(-fd));
}

struct worker {
	pthread_barrier_t barrier;
	pid_t tid;
	int stop;
	unsigned long rounds;
};

static void *worker_fn(void *arg)
{
	struct worker *w = arg;

	w->tid = syscall(SYS_gettid);
	pthread_barrier_wait(&w->barrier);	/* tid known: breakpoints go on */
	pthread_barrier_wait(&w->barrier);	/* they are on: write */
	w->rounds = write_vars(&vars[8], 2 * NR_REGS - 2, 10000, &w->stop);
	pthread_barrier_wait(&w->barrier);	/* stopped: counts are read */
	pthread_barrier_wait(&w->barrier);	/* read: the thread may go */
	return NULL;
}

/*
 * "A program that does not set bp_flexible gets exactly what Linux 6.12
 * gave it as long as no flexible breakpoint exists on the tasks it
 * watches": six flexible breakpoints on a thread take turns there and take
 * nothing from the main thread, a task of its own, which still gets four
 * reserved ones and ENOSPC at the fifth.
 */
TEST_F(flex, flexible_on_thread_leave_other_task_alone)
{
	int flex[2 * NR_REGS - 2], res[NR_REGS], i, nr = 2 * NR_REGS - 2;
	__u64 enabled = 0, reg_time = 0;
	struct worker w = { .stop = 0 };
	unsigned long rounds;
	pthread_t thread;
	struct count c;

	ASSERT_EQ(0, pthread_barrier_init(&w.barrier, NULL, 2));
	ASSERT_EQ(0, pthread_create(&thread, NULL, worker_fn, &w));
	pthread_barrier_wait(&w.barrier);

	for (i = 0; i < nr; i++) {
		flex[i] = bp_open_on(&vars[8 + i], BP_FLEX, w.tid, -1, -1);
		ASSERT_LE(0, flex[i]) TH_LOG("flexible %d on the thread: %s", i,
					     strerror(-flex[i]));
	}
	for (i = 0; i < NR_REGS; i++) {
		res[i] = bp_open(&vars[i], 0, -1);
		ASSERT_LE(0, res[i]) TH_LOG("reserved %d on the main thread: %s", i,
					    strerror(-res[i]));
	}
	EXPECT_EQ(-ENOSPC, bp_open(&vars[NR_REGS], 0, -1));

	pthread_barrier_wait(&w.barrier);
	rounds = write_vars(vars, NR_REGS, window_ms(self->mux_ms), NULL);
	__atomic_store_n(&w.stop, 1, __ATOMIC_RELEASE);
	pthread_barrier_wait(&w.barrier);
	ASSERT_EQ(0, stop_counting());

	for (i = 0; i < NR_REGS; i++) {
		ASSERT_EQ(0, read_count(res[i], &c));
		EXPECT_EQ(rounds, c.value) TH_LOG("reserved %d missed hits", i);
	}
	for (i = 0; i < nr; i++) {
		ASSERT_EQ(0, read_count(flex[i], &c));
		EXPECT_GT(c.running, 0) TH_LOG("flexible %d never ran on the thread", i);
		EXPECT_GT(c.value, 0) TH_LOG("flexible %d saw no hit of the thread", i);
		EXPECT_LE(c.value, w.rounds);
		reg_time += c.running;
		if (c.enabled > enabled)
			enabled = c.enabled;
	}
	EXPECT_LE(reg_time, reg_limit(NR_REGS, enabled))
		TH_LOG("%llu ns of running in %llu ns", reg_time, enabled);

	pthread_barrier_wait(&w.barrier);
	pthread_join(thread, NULL);
}

#ifdef X86
/* Forks a child that stops under our ptrace; returns its pid or -1. */
static pid_t stopped_tracee(void)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		_exit(0);
	}
	if (pid < 0)
		return -1;
	/* WUNTRACED: the child stops even when PTRACE_TRACEME was refused. */
	if (waitpid(pid, &status, WUNTRACED) != pid || !WIFSTOPPED(status)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

/* Sets debug address register @n of @pid to watch @var, as a debugger does. */
static int set_debugreg(pid_t pid, int n, unsigned long *var)
{
	long off = offsetof(struct user, u_debugreg) + n * sizeof(long);

	return ptrace(PTRACE_POKEUSER, pid, (void *)off, (void *)var) ? -errno : 0;
}

/*
 * "In-kernel users (ptrace, kgdb, the ksym tracer) create pinned
 * breakpoints": reserved ones, so next to a flexible breakpoint of the
 * task a debugger gets three registers and the fourth gets ENOSPC.
 */
TEST_F(flex, ptrace_next_to_flexible_gets_three)
{
	int fd, ret, i;

	self->child = stopped_tracee();
	ASSERT_LT(0, self->child);
	fd = bp_open_on(&vars[0], BP_FLEX, self->child, -1, -1);
	ASSERT_LE(0, fd) TH_LOG("flexible on the tracee: %s", strerror(-fd));

	ret = set_debugreg(self->child, 0, &vars[1]);
	if (ret == -ESRCH || ret == -EPERM)
		SKIP(return, "cannot ptrace the child: %s", strerror(-ret));
	ASSERT_EQ(0, ret) TH_LOG("DR0: %s", strerror(-ret));
	for (i = 1; i < NR_REGS - 1; i++) {
		ret = set_debugreg(self->child, i, &vars[1 + i]);
		ASSERT_EQ(0, ret) TH_LOG("DR%d: %s", i, strerror(-ret));
	}
	EXPECT_EQ(-ENOSPC, set_debugreg(self->child, NR_REGS - 1, &vars[NR_REGS]));
}

/* The other way round: four ptrace breakpoints leave none for a flexible one. */
TEST_F(flex, flexible_next_to_four_ptrace_enospc)
{
	int ret, i;

	self->child = stopped_tracee();
	ASSERT_LT(0, self->child);
	ret = set_debugreg(self->child, 0, &vars[0]);
	if (ret == -ESRCH || ret == -EPERM)
		SKIP(return, "cannot ptrace the child: %s", strerror(-ret));
	ASSERT_EQ(0, ret) TH_LOG("DR0: %s", strerror(-ret));
	for (i = 1; i < NR_REGS; i++) {
		ret = set_debugreg(self->child, i, &vars[i]);
		ASSERT_EQ(0, ret) TH_LOG("DR%d: %s", i, strerror(-ret));
	}
	EXPECT_EQ(-ENOSPC, bp_open_on(&vars[NR_REGS], BP_FLEX, self->child, -1, -1));
}
#endif /* X86 */

/*
 * "flexible breakpoints of a CPU leave fewer registers for every task that
 * runs there"; "In every CPU, what the CPU's breakpoints need plus what any
 * one task needs there must fit in the four registers"; "The flexible
 * breakpoints of a CPU take turns on the registers counted for them only,
 * so that the task that runs finds its own free".
 */
TEST_F(flex, cpu_flexible_leave_fewer_and_take_turns)
{
	int cpufd[2], res[NR_REGS - 1], cpu, i;
	__u64 enabled = 0, reg_time = 0;
	unsigned long rounds;
	struct count c;
	cpu_set_t set;

	/* Run on the watched CPU, so that its breakpoints see our writes. */
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(set), &set));
	for (cpu = 0; cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &set); cpu++)
		;
	ASSERT_LT(cpu, CPU_SETSIZE);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));

	for (i = 0; i < 2; i++) {
		cpufd[i] = bp_open_on(&vars[i], BP_FLEX, -1, cpu, -1);
		if (cpufd[i] == -EACCES || cpufd[i] == -EPERM)
			SKIP(return, "CPU breakpoints need CAP_PERFMON or perf_event_paranoid 0");
		ASSERT_LE(0, cpufd[i]) TH_LOG("flexible on CPU %d: %s", cpu, strerror(-cpufd[i]));
	}
	/* The CPU's two flexible singles need one register: three are left. */
	for (i = 0; i < NR_REGS - 1; i++) {
		res[i] = bp_open(&vars[2 + i], 0, -1);
		ASSERT_LE(0, res[i]) TH_LOG("task reserved %d: %s", i, strerror(-res[i]));
	}
	EXPECT_EQ(-ENOSPC, bp_open(&vars[2 + NR_REGS - 1], 0, -1));
	EXPECT_EQ(-ENOSPC, bp_open(&vars[2 + NR_REGS - 1], BP_FLEX, -1));

	rounds = write_vars(vars, 2 + NR_REGS - 1, window_ms(self->mux_ms), NULL);
	ASSERT_EQ(0, stop_counting());
	for (i = 0; i < NR_REGS - 1; i++) {
		ASSERT_EQ(0, read_count(res[i], &c));
		EXPECT_EQ(rounds, c.value) TH_LOG("task reserved %d missed hits", i);
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, read_count(cpufd[i], &c));
		EXPECT_GT(c.running, 0) TH_LOG("CPU flexible %d never ran", i);
		EXPECT_GT(c.value, 0) TH_LOG("CPU flexible %d saw no hit", i);
		reg_time += c.running;
		if (c.enabled > enabled)
			enabled = c.enabled;
	}
	/* Counted for one register, they never ran two at once. */
	EXPECT_LE(reg_time, reg_limit(1, enabled))
		TH_LOG("%llu ns of running in %llu ns on 1 register", reg_time, enabled);
}

/*
 * "Flexible groups are rotated on the breakpoint PMU's timer,
 * /sys/bus/event_source/devices/breakpoint/perf_event_mux_interval_ms, by
 * default every 1000 / HZ milliseconds".
 */
TEST_F(flex, mux_interval_file)
{
	unsigned int ms;

	if (access(EVENT_SOURCE, F_OK))
		SKIP(return, "sysfs is not mounted");
	ASSERT_EQ(0, read_uint(MUX_FILE, &ms)) TH_LOG("cannot read %s", MUX_FILE);
	EXPECT_LT(0, ms);
	/* HZ is not visible from user space: a default we do not know is no failure. */
	if (ms != 1 && ms != 3 && ms != 4 && ms != 10)
		TH_LOG("%u ms is 1000 / HZ for no usual HZ: set by hand?", ms);
}

TEST_HARNESS_MAIN
