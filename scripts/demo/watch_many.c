// SPDX-License-Identifier: GPL-2.0
/*
 * watch_many: more write watchpoints on one task than x86 has debug
 * registers, for `make run`.
 *
 * It opens NR_WATCH watchpoints on variables of its own, each with
 * perf_event_attr::bp_flexible set, so that perf multiplexes them over the
 * four debug registers instead of refusing the fifth with ENOSPC.  Then it
 * writes every variable in turn for about a second and prints, for each
 * watchpoint, the hits it counted and the share of the time it held a
 * register (time_running / time_enabled).  A watchpoint counts only the
 * writes made while it was scheduled in, so its hits are about that share
 * of the writes, and the shares add up to about four registers.
 *
 * Exit 0 if every watchpoint was accepted, took turns (ran for some but
 * not all of the time) and counted hits; 1 otherwise, with the reason.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <linux/types.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NR_WATCH	8
#define NR_REGS		4	/* DR0-DR3 */
#define RUN_NS		(1000 * 1000 * 1000ULL)

struct watch_read {
	__u64 hits;
	__u64 enabled;
	__u64 running;
};

static __u64 watched[NR_WATCH];

static int open_watch(__u64 *addr)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_BREAKPOINT;
	attr.size = sizeof(attr);
	attr.bp_type = HW_BREAKPOINT_W;
	attr.bp_addr = (unsigned long)addr;
	attr.bp_len = HW_BREAKPOINT_LEN_8;
	attr.bp_flexible = 1;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
			   PERF_FORMAT_TOTAL_TIME_RUNNING;
	return syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Write every watched variable in turn for RUN_NS; return the rounds. */
static __u64 write_loop(void)
{
	__u64 end = now_ns() + RUN_NS;
	__u64 rounds = 0;

	do {
		for (int r = 0; r < 64; r++, rounds++) {
			for (int i = 0; i < NR_WATCH; i++) {
				watched[i] = rounds;
				/* One store per write, none merged. */
				asm volatile("" ::: "memory");
			}
		}
	} while (now_ns() < end);
	return rounds;
}

static double percent(__u64 part, __u64 whole)
{
	return whole ? 100.0 * part / whole : 0.0;
}

int main(void)
{
	struct watch_read rd[NR_WATCH];
	int fds[NR_WATCH];
	double shares = 0;
	__u64 writes;
	int bad = 0;

	for (int i = 0; i < NR_WATCH; i++) {
		fds[i] = open_watch(&watched[i]);
		if (fds[i] < 0) {
			printf("watch_many: watchpoint %d of %d refused: %s%s\n",
			       i + 1, NR_WATCH, strerror(errno),
			       errno == EINVAL ?
			       " (a kernel without bp_flexible?)" : "");
			return 1;
		}
	}
	printf("%d flexible write watchpoints opened on one task, %d debug registers\n",
	       NR_WATCH, NR_REGS);

	for (int i = 0; i < NR_WATCH; i++)
		ioctl(fds[i], PERF_EVENT_IOC_ENABLE, 0);
	writes = write_loop();
	for (int i = 0; i < NR_WATCH; i++)
		ioctl(fds[i], PERF_EVENT_IOC_DISABLE, 0);

	for (int i = 0; i < NR_WATCH; i++) {
		if (read(fds[i], &rd[i], sizeof(rd[i])) != sizeof(rd[i])) {
			printf("watch_many: reading watchpoint %d: %s\n",
			       i + 1, strerror(errno));
			return 1;
		}
	}

	printf("each variable written %llu times in %.1f s\n\n",
	       (unsigned long long)writes, RUN_NS / 1e9);
	printf("  watchpoint      hits  running/enabled  hits/writes\n");
	for (int i = 0; i < NR_WATCH; i++) {
		double share = percent(rd[i].running, rd[i].enabled);
		const char *why = NULL;

		shares += share;
		if (!rd[i].running)
			why = "never scheduled in";
		else if (rd[i].running >= rd[i].enabled)
			why = "held a register all the time";
		else if (!rd[i].hits)
			why = "no hits";
		printf("  watched[%d]  %8llu  %14.1f%%  %10.1f%%%s%s\n", i,
		       (unsigned long long)rd[i].hits, share,
		       percent(rd[i].hits, writes),
		       why ? "  <- wrong: " : "", why ? why : "");
		bad |= !!why;
		close(fds[i]);
	}
	printf("\nshares add up to %.0f%%: %.1f registers' worth for %d watchpoints\n",
	       shares, shares / 100, NR_WATCH);
	if (bad)
		printf("watch_many: the watchpoints did not take turns\n");
	return bad;
}
