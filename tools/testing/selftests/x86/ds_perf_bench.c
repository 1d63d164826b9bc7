// SPDX-License-Identifier: GPL-2.0
/*
 * perf_event_open() of an event that claims a half of the Debug Store
 * from the arbiter (ds_perf_get()), alone and with a PTRACE_BTS_CONFIG
 * loop of another process beside it, in one run.
 *
 * The CONFIG loop switches a tracee's switch records (PTRACE_BTS_O_SCHED,
 * which works on any cpu and does not keep perf from BTS) on and off, so
 * that the arbiter requests and releases a tracer, with its grace periods,
 * as fast as an unprivileged user can.  perf's claim must not wait for
 * that: the open rate with the loop beside it should be the rate alone.
 *
 * The event is a precise (PEBS) one if the cpu has PEBS, else perf's BTS
 * event (branch instructions, sample period 1), which claims the BTS half.
 * The two loops run on different cpus.
 *
 * Prints "BENCH <key> <value>" lines and the ratio.  A benchmark, not a
 * test: it fails only if the requests fail.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/ptrace.h>
#include <asm/ptrace-bts.h>

#define PHASE_SECONDS	2.0
#define RECORDS		64

static long bts(long request, pid_t pid, unsigned long addr,
		unsigned long data)
{
	return syscall(SYS_ptrace, request, pid, addr, data);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1000000000.0;
}

static void die(const char *what)
{
	fprintf(stderr, "ds_perf_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

static int perf_open(struct perf_event_attr *attr)
{
	return syscall(SYS_perf_event_open, attr, 0, -1, -1, 0);
}

/* The event to open: precise cycles if the cpu has PEBS, else BTS. */
static const char *pick_event(struct perf_event_attr *attr)
{
	int fd;

	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_HARDWARE;
	attr->config = PERF_COUNT_HW_CPU_CYCLES;
	attr->sample_period = 100000;
	attr->precise_ip = 1;
	attr->exclude_kernel = 1;
	attr->disabled = 1;
	fd = perf_open(attr);
	if (fd >= 0) {
		close(fd);
		return "precise";
	}

	attr->config = PERF_COUNT_HW_BRANCH_INSTRUCTIONS;
	attr->sample_period = 1;
	attr->precise_ip = 0;
	fd = perf_open(attr);
	if (fd >= 0) {
		close(fd);
		return "bts";
	}
	return NULL;
}

/* Opens and closes per second, for PHASE_SECONDS. */
static double open_rate(struct perf_event_attr *attr)
{
	double start = now(), t;
	long n = 0;
	int fd;

	do {
		fd = perf_open(attr);
		if (fd < 0)
			die("perf_event_open");
		close(fd);
		n++;
		t = now() - start;
	} while (t < PHASE_SECONDS);
	return n / t;
}

static pid_t spawn_tracee(void)
{
	struct timespec ts = { 0, 100000 };
	pid_t pid;
	int st;

	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (bts(PTRACE_TRACEME, 0, 0, 0))
			_exit(1);
		raise(SIGSTOP);
		for (;;)
			nanosleep(&ts, NULL);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st))
		die("tracee stop");
	return pid;
}

/*
 * The other user: CONFIG on and off until killed, counting in @count.
 * The tracee stays stopped, as PTRACE_BTS_CONFIG needs.
 */
static void config_loop(long *count, int cpu)
{
	struct ptrace_bts_config on = {
		.size	= RECORDS * sizeof(struct bts_struct),
		.flags	= PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED,
	};
	struct ptrace_bts_config off = {
		.size	= RECORDS * sizeof(struct bts_struct),
	};
	pid_t pid;

	pin(cpu);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	pid = spawn_tracee();
	if (bts(PTRACE_BTS_CONFIG, pid, (unsigned long)&on, sizeof(on)))
		die("PTRACE_BTS_CONFIG");
	on.flags &= ~PTRACE_BTS_O_ALLOC;
	for (;;) {
		if (bts(PTRACE_BTS_CONFIG, pid, (unsigned long)&off,
			sizeof(off)) ||
		    bts(PTRACE_BTS_CONFIG, pid, (unsigned long)&on,
			sizeof(on)))
			die("PTRACE_BTS_CONFIG loop");
		__atomic_fetch_add(count, 1, __ATOMIC_RELAXED);
	}
}

/**
 * main() - open rate alone, beside the CONFIG loop, alone again
 *
 * Return: 0, or 1 if a request failed.
 */
int main(void)
{
	double alone1, beside, alone2, alone, t;
	struct perf_event_attr attr;
	long *count;
	const char *event;
	long configs;
	pid_t loop;
	int st;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("SKIP: needs two cpus\n");
		return 0;
	}
	event = pick_event(&attr);
	if (!event) {
		printf("SKIP: no event that claims a Debug Store half: %s\n",
		       strerror(errno));
		return 0;
	}
	count = mmap(NULL, sizeof(*count), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (count == MAP_FAILED)
		die("mmap");

	pin(0);
	alone1 = open_rate(&attr);

	loop = fork();
	if (loop < 0)
		die("fork");
	if (!loop) {
		config_loop(count, 1);
		_exit(0);
	}
	/* Let it start, then count its requests in our phase only. */
	while (!__atomic_load_n(count, __ATOMIC_RELAXED))
		usleep(1000);
	configs = __atomic_load_n(count, __ATOMIC_RELAXED);
	t = now();
	beside = open_rate(&attr);
	configs = __atomic_load_n(count, __ATOMIC_RELAXED) - configs;
	t = now() - t;
	kill(loop, SIGKILL);
	waitpid(loop, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st)) {
		fprintf(stderr, "ds_perf_bench: the CONFIG loop failed\n");
		return 1;
	}

	alone2 = open_rate(&attr);
	alone = (alone1 + alone2) / 2;

	printf("event %s\n", event);
	printf("BENCH perf_open_alone_per_s %.0f\n", alone);
	printf("BENCH perf_open_beside_config_per_s %.0f\n", beside);
	printf("BENCH config_pairs_per_s %.0f\n", configs / t);
	printf("ratio perf_event_open/s beside CONFIG / alone: %.3f\n",
	       beside / alone);
	printf("(alone: %.0f before, %.0f after)\n", alone1, alone2);
	return 0;
}
