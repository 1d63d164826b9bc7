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
 *              threads hold breakpoints, as "perf bench breakpoint enable".
 *
 * Each key ends in _pinned or _flexible, the kind of breakpoint used.  Every
 * value is the median of REPEATS runs, in ns per operation, printed as
 * "BENCH KEY VALUE".  Run it on two kernels to compare them.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest.h"

#define REPEATS		7
#define OPEN_OPS	2000
#define THREAD_OPS	200
#define ENABLE_OPS	2000
#define NR_PASSIVE	8

static uint64_t watched[2 + NR_PASSIVE];

struct passive {
	pthread_t thread;
	pid_t tid;
	int fd;
};

static pthread_barrier_t passive_ready;
static int passive_pipe[2];

static int open_watch(uint64_t *addr, pid_t pid, int pinned, int inherit)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_BREAKPOINT;
	attr.size = sizeof(attr);
	attr.bp_type = HW_BREAKPOINT_RW;
	attr.bp_addr = (uintptr_t)addr;
	attr.bp_len = HW_BREAKPOINT_LEN_1;
	attr.pinned = pinned;
	attr.inherit = inherit;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;

	return syscall(__NR_perf_event_open, &attr, pid, -1, -1, 0);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v)
{
	qsort(v, REPEATS, sizeof(*v), cmp_u64);
	return v[REPEATS / 2];
}

static uint64_t bench_open(int pinned)
{
	uint64_t start = now_ns();

	for (int i = 0; i < OPEN_OPS; i++) {
		int fd = open_watch(&watched[0], 0, pinned, 0);

		if (fd < 0)
			ksft_exit_fail_msg("perf_event_open: %s\n", strerror(errno));
		close(fd);
	}
	return (now_ns() - start) / OPEN_OPS;
}

static void *idle_thread(void *arg)
{
	return arg;
}

static uint64_t bench_thread(int pinned)
{
	uint64_t start;
	int fd;

	fd = open_watch(&watched[0], 0, pinned, 1);
	if (fd < 0)
		ksft_exit_fail_msg("perf_event_open: %s\n", strerror(errno));

	start = now_ns();
	for (int i = 0; i < THREAD_OPS; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, idle_thread, NULL))
			ksft_exit_fail_msg("pthread_create failed\n");
		pthread_join(t, NULL);
	}
	start = (now_ns() - start) / THREAD_OPS;
	close(fd);
	return start;
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

	fd = open_watch(&watched[1], 0, pinned, 0);
	if (fd < 0)
		ksft_exit_fail_msg("perf_event_open: %s\n", strerror(errno));

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

static void run_enable(int pinned, const char *key)
{
	struct passive passive[NR_PASSIVE];
	uint64_t v[REPEATS];
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
		passive[i].fd = open_watch(&watched[2 + i], passive[i].tid,
					   pinned, 0);
		if (passive[i].fd < 0)
			ksft_exit_fail_msg("perf_event_open: %s\n",
					   strerror(errno));
	}

	for (int r = 0; r < REPEATS; r++)
		v[r] = bench_enable(pinned);
	printf("BENCH %s %llu\n", key, (unsigned long long)median(v));

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
}

/**
 * main() - Measure and print every key, for pinned then flexible breakpoints.
 *
 * Return: 0, or KSFT_SKIP when the kernel has no hardware breakpoints.
 */
int main(void)
{
	static const char * const kind[] = { "flexible", "pinned" };
	uint64_t v[REPEATS];
	char key[32];
	int fd;

	fd = open_watch(&watched[0], 0, 1, 0);
	if (fd < 0) {
		printf("SKIP no hardware breakpoints: %s\n", strerror(errno));
		return KSFT_SKIP;
	}
	close(fd);

	for (int pinned = 1; pinned >= 0; pinned--) {
		for (int r = 0; r < REPEATS; r++)
			v[r] = bench_open(pinned);
		printf("BENCH open_%s %llu\n", kind[pinned],
		       (unsigned long long)median(v));

		for (int r = 0; r < REPEATS; r++)
			v[r] = bench_thread(pinned);
		printf("BENCH thread_%s %llu\n", kind[pinned],
		       (unsigned long long)median(v));

		snprintf(key, sizeof(key), "enable_%s", kind[pinned]);
		run_enable(pinned, key);
	}
	return 0;
}
