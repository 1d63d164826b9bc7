// SPDX-License-Identifier: GPL-2.0
/*
 * Helper of the ksym tracer's ftracetest cases (test.d/tracer/ksym-*.tc):
 * the things a shell cannot do.
 *
 *   ksym_helper hold CPU
 *	Open pinned hardware breakpoints of this task bound to CPU until the
 *	breakpoint layer refuses one, print "held N" and wait for a signal.
 *	Task breakpoints may be bound to an offline CPU and need no
 *	privilege: this is how any user can take every debug register of a
 *	CPU that is offline.
 *
 * Exit status 0 on success, 1 on a failure, 4 (KSFT_SKIP) when the kernel
 * lacks what the command needs.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>

#define KSFT_SKIP	4
/* More than any architecture has debug registers. */
#define MAX_HOLD	16

/* What the breakpoints watch; never accessed while they exist. */
static uint64_t watched[MAX_HOLD];

static int hold(int cpu)
{
	struct perf_event_attr attr;
	sigset_t set;
	int n, sig;

	for (n = 0; n < MAX_HOLD; n++) {
		memset(&attr, 0, sizeof(attr));
		attr.type = PERF_TYPE_BREAKPOINT;
		attr.size = sizeof(attr);
		attr.bp_type = HW_BREAKPOINT_W;
		attr.bp_addr = (uintptr_t)&watched[n];
		attr.bp_len = HW_BREAKPOINT_LEN_8;
		attr.sample_period = 1;
		/* Pinned: a flexible breakpoint may share a register. */
		attr.pinned = 1;
		attr.exclude_kernel = 1;
		attr.exclude_hv = 1;
		/* This task, only while it runs on @cpu. */
		if (syscall(SYS_perf_event_open, &attr, 0, cpu, -1, 0) < 0)
			break;
	}
	if (!n) {
		printf("held 0: %s\n", strerror(errno));
		return errno == ENOENT || errno == EOPNOTSUPP ? KSFT_SKIP : 1;
	}
	if (errno != ENOSPC) {
		printf("held %d, then: %s\n", n, strerror(errno));
		return 1;
	}

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("held %d\n", n);
	fflush(stdout);
	sigwait(&set, &sig);
	return 0;
}

/**
 * main() - run the command named on the command line
 * @argc: 3
 * @argv: "hold" and a CPU number
 *
 * Return: the exit status described at the top of this file.
 */
int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "hold"))
		return hold(atoi(argv[2]));
	fprintf(stderr, "usage: %s hold CPU\n", argv[0]);
	return 1;
}
