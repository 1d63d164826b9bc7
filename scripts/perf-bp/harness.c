// SPDX-License-Identifier: GPL-2.0
/*
 * Run upstream perf's hardware breakpoint tests, compiled unchanged from
 * the kernel tree, as a kselftest: one TAP line per test case.  Each case
 * runs in a child of its own, as "perf test" runs it, and what it prints
 * through pr_debug() comes out as TAP comments before its verdict.
 *
 * perf reports TEST_SKIP as a skip whatever the reason.  Here a skip is a
 * failure unless perf_bp_known_skips[] explains it: the x86 machines this
 * runs on have the four debug registers every one of these cases needs,
 * so any other skip means the kernel gave the test less than 6.12 does.
 * bp_accounting, for one, skips when it can open 100 breakpoints at once.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/kernel.h>

#include "tests.h"
#include "arch-tests.h"

/* Long enough for sigtrap under KASAN and TCG; catches hangs only. */
#define PERF_BP_CASE_TIMEOUT	300

/* Defined upstream in arch/x86/tests/arch-tests.c, next to tests needing all of perf. */
DEFINE_SUITE("x86 bp modify", bp_modify);

/* perf's order: its generic tests, then the x86 ones. */
static struct test_suite *perf_bp_suites[] = {
	&suite__bp_signal,
	&suite__bp_signal_overflow,
	&suite__bp_accounting,
	&suite__wp,
	&suite__sigtrap,
	&suite__bp_modify,
};

/* Cases that skip on every x86 machine, and why. */
static const struct {
	const char *name;
	const char *why;
} perf_bp_known_skips[] = {
	{ "wp_ro", "x86 debug registers watch writes or reads and writes, never reads alone" },
};

struct perf_bp_totals {
	int pass;
	int fail;
	int skip;
};

static const char *perf_bp_known_skip(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(perf_bp_known_skips); i++)
		if (!strcmp(perf_bp_known_skips[i].name, name))
			return perf_bp_known_skips[i].why;
	return NULL;
}

/* In the child: run one case with its output into @out; never returns. */
static void perf_bp_child(struct test_suite *suite, int i, int out)
{
	int ret;

	if (dup2(out, STDOUT_FILENO) < 0 || dup2(out, STDERR_FILENO) < 0)
		_exit(127);
	close(out);
	alarm(PERF_BP_CASE_TIMEOUT);
	ret = suite->test_cases[i].run_case(suite, i);
	fflush(stdout);
	fflush(stderr);
	_exit(ret == TEST_OK ? 0 : ret == TEST_SKIP ? 2 : 1);
}

/*
 * Copy the child's output as TAP comments; keep its last line in @last,
 * the reason perf would give for a skip that has no skip_reason.
 */
static void perf_bp_relay(int in, char *last, size_t size)
{
	FILE *f = fdopen(in, "r");
	size_t cap = 0, len;
	char *line = NULL;

	if (!f) {
		close(in);
		return;
	}
	while (getline(&line, &cap, f) > 0) {
		len = strcspn(line, "\n");
		line[len] = '\0';
		printf(len ? "# %s\n" : "#\n", line);
		if (len)
			snprintf(last, size, "%s", line);
	}
	free(line);
	fclose(f);
}

/* Run case @i of @suite as TAP case number @num. */
static void perf_bp_run_case(struct test_suite *suite, int i, int num,
			     struct perf_bp_totals *totals)
{
	const struct test_case *tc = &suite->test_cases[i];
	const char *reason, *why;
	char last[256] = "";
	int fds[2], status;
	pid_t pid;

	printf("# %s: %s\n", tc->name, tc->desc);
	fflush(stdout);
	if (pipe(fds)) {
		printf("not ok %d %s # pipe: %m\n", num, tc->name);
		totals->fail++;
		return;
	}
	pid = fork();
	if (pid < 0) {
		printf("not ok %d %s # fork: %m\n", num, tc->name);
		close(fds[0]);
		close(fds[1]);
		totals->fail++;
		return;
	}
	if (!pid) {
		close(fds[0]);
		perf_bp_child(suite, i, fds[1]);
	}
	close(fds[1]);
	perf_bp_relay(fds[0], last, sizeof(last));
	if (waitpid(pid, &status, 0) != pid) {
		printf("not ok %d %s # waitpid: %m\n", num, tc->name);
		totals->fail++;
		return;
	}

	if (WIFSIGNALED(status)) {
		if (WTERMSIG(status) == SIGALRM)
			printf("not ok %d %s # no verdict within %d s\n",
			       num, tc->name, PERF_BP_CASE_TIMEOUT);
		else
			printf("not ok %d %s # killed by signal %d (%s)\n", num,
			       tc->name, WTERMSIG(status), strsignal(WTERMSIG(status)));
		totals->fail++;
		return;
	}

	switch (WEXITSTATUS(status)) {
	case 0:
		printf("ok %d %s\n", num, tc->name);
		totals->pass++;
		break;
	case 2:
		reason = tc->skip_reason ? tc->skip_reason :
			 last[0] ? last : "no reason given";
		why = perf_bp_known_skip(tc->name);
		if (why) {
			printf("ok %d %s # SKIP %s: %s\n", num, tc->name, reason, why);
			totals->skip++;
		} else {
			printf("not ok %d %s # unexpected skip on x86: %s\n",
			       num, tc->name, reason);
			totals->fail++;
		}
		break;
	default:
		printf("not ok %d %s # %s\n", num, tc->name,
		       last[0] ? last : "failed without a message");
		totals->fail++;
		break;
	}
}

int main(void)
{
	const size_t nr_suites = ARRAY_SIZE(perf_bp_suites);
	struct perf_bp_totals totals = { 0 };
	int i, num = 0;
	size_t s;

	for (s = 0; s < nr_suites; s++)
		for (i = 0; perf_bp_suites[s]->test_cases[i].name; i++)
			num++;
	printf("TAP version 13\n1..%d\n", num);

	num = 0;
	for (s = 0; s < nr_suites; s++)
		for (i = 0; perf_bp_suites[s]->test_cases[i].name; i++)
			perf_bp_run_case(perf_bp_suites[s], i, ++num, &totals);

	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n",
	       totals.pass, totals.fail, totals.skip);
	return totals.fail ? EXIT_FAILURE : EXIT_SUCCESS;
}
