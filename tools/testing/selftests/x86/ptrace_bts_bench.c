// SPDX-License-Identifier: GPL-2.0
/*
 * PTRACE_BTS_DRAIN against a PTRACE_BTS_GET per record, and against a
 * plain memcpy() of the same bytes, on the same full buffer, in one run.
 *
 * The buffer is filled with switch records (PTRACE_BTS_O_SCHED, which
 * works on any cpu) of a tracee that sleeps in a loop; PTRACE_BTS_O_SIGNAL
 * stops it when the buffer is full.  Each round then reads the buffer with
 * a GET per record (which leaves it full), with one DRAIN, and copies the
 * drained bytes with memcpy(); the best of the rounds counts.
 *
 * Prints "BENCH <key> <records/s>" lines and the ratios.  A benchmark, not
 * a test: it fails only if the requests fail.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/ptrace.h>
#include <asm/ptrace-bts.h>

#define RECORDS		8192
#define ROUNDS		5
#define COPIES		20

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
	fprintf(stderr, "ptrace_bts_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static pid_t spawn_sleeper(void)
{
	struct timespec ts = { 0, 1000 };
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
		die("first stop");
	return pid;
}

/* Run the tracee until the full buffer signals it. */
static void fill(pid_t pid)
{
	int st;

	if (bts(PTRACE_CONT, pid, 0, 0))
		die("PTRACE_CONT");
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st) ||
	    WSTOPSIG(st) != SIGUSR1)
		die("overflow stop");
	if (bts(PTRACE_BTS_SIZE, pid, 0, 0) != RECORDS)
		die("buffer not full");
}

/**
 * main() - fill, read three ways, print records/s and the ratios
 *
 * Return: 0, or 1 if a request failed.
 */
int main(void)
{
	double best_get = 1e9, best_drain = 1e9, best_copy = 1e9, t;
	struct ptrace_bts_config cfg = {
		.size	= RECORDS * sizeof(struct bts_struct),
		.flags	= PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED |
			  PTRACE_BTS_O_SIGNAL,
		.signal	= SIGUSR1,
	};
	struct bts_struct *got, *drained, *copied;
	double get_rate, drain_rate, copy_rate;
	int round, i, st;
	pid_t pid;

	got = calloc(RECORDS, sizeof(*got));
	drained = calloc(RECORDS, sizeof(*drained));
	copied = calloc(RECORDS, sizeof(*copied));
	if (!got || !drained || !copied)
		die("calloc");

	pid = spawn_sleeper();
	if (bts(PTRACE_BTS_CONFIG, pid, (unsigned long)&cfg, sizeof(cfg)))
		die("PTRACE_BTS_CONFIG");

	for (round = 0; round < ROUNDS; round++) {
		fill(pid);

		t = now();
		for (i = 0; i < RECORDS; i++) {
			if (bts(PTRACE_BTS_GET, pid, (unsigned long)&got[i], i))
				die("PTRACE_BTS_GET");
		}
		t = now() - t;
		if (t < best_get)
			best_get = t;

		t = now();
		if (bts(PTRACE_BTS_DRAIN, pid, (unsigned long)drained,
			RECORDS * sizeof(*drained)) != RECORDS)
			die("PTRACE_BTS_DRAIN");
		t = now() - t;
		if (t < best_drain)
			best_drain = t;

		/* The same records, both ways. */
		if (memcmp(&got[0], &drained[RECORDS - 1], sizeof(*got)))
			die("GET 0 is not the last drained record");

		t = now();
		for (i = 0; i < COPIES; i++) {
			memcpy(copied, drained, RECORDS * sizeof(*drained));
			asm volatile("" : : "r" (copied) : "memory");
		}
		t = (now() - t) / COPIES;
		if (t < best_copy)
			best_copy = t;
	}

	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);

	get_rate = RECORDS / best_get;
	drain_rate = RECORDS / best_drain;
	copy_rate = RECORDS / best_copy;
	printf("BENCH get_records_per_s %.0f\n", get_rate);
	printf("BENCH drain_records_per_s %.0f\n", drain_rate);
	printf("BENCH memcpy_records_per_s %.0f\n", copy_rate);
	printf("ratio DRAIN/GET records/s: %.1fx (%d records, best of %d)\n",
	       drain_rate / get_rate, RECORDS, ROUNDS);
	printf("ratio DRAIN/memcpy records/s: %.3f (memcpy of the same %zu bytes is the limit)\n",
	       drain_rate / copy_rate, RECORDS * sizeof(struct bts_struct));
	return 0;
}
