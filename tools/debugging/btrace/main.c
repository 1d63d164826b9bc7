// SPDX-License-Identifier: GPL-2.0
/*
 * btrace: options, usage, exit codes, and the small helpers every file
 * uses.  See btrace.1.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btrace.h"

const char *bt_prog = "btrace";

#define BT_DEFAULT_BRANCHES	50

static const char bt_usage[] =
"usage: btrace [-n N] [-s SIZE] [--all] [--sched] [--branches] [-o FILE] -- PROG [ARGS...]\n"
"       btrace [-n N] [-s SIZE] [--all] [--sched] [--branches] [-o FILE] -p PID\n"
"       btrace report [-n N] [--branches] FILE\n"
"\n"
"Run PROG (or attach to PID) with the CPU's Branch Trace Store on every\n"
"thread; when a thread gets a fatal signal, print the signal, the faulting\n"
"address and its last branches; else print each thread's last branches\n"
"when it exits (or, with -p, when Ctrl-C detaches).\n"
"\n"
"  -n N          show the last N branches of a thread (default 50, 0: all)\n"
"  -s SIZE       records in each thread's buffer (K and M suffixes; the\n"
"                default fits RLIMIT_MEMLOCK)\n"
"  --all         record every branch (lossless), not the last SIZE\n"
"  --sched       also record context switches\n"
"  --branches    list every branch, not the function-call history\n"
"  -o FILE       save the trace for `btrace report FILE`\n"
"  -p PID        attach to a running process\n"
"  -h, --help    this text\n"
"\n"
"Exit status: PROG's (its exit code, or 128 + the signal that killed it);\n"
"2 usage; 122 RLIMIT_MEMLOCK too small; 123 not permitted; 124 no BTS;\n"
"125 other btrace failure; 126 PROG cannot run; 127 PROG not found.\n";

/**
 * bt_err() - print a message for the user, prefixed with "btrace: "
 * @fmt: printf format
 */
void bt_err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", bt_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/**
 * bt_alloc() - zeroed memory, or exit
 * @size: its size
 *
 * Return: the memory.
 */
void *bt_alloc(size_t size)
{
	void *p = calloc(1, size ? size : 1);

	if (!p) {
		bt_err("out of memory");
		exit(BT_EXIT_FAIL);
	}
	return p;
}

/**
 * bt_grow() - realloc(), or exit
 * @p: the memory
 * @size: its new size
 *
 * Return: the memory.
 */
void *bt_grow(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (!p) {
		bt_err("out of memory");
		exit(BT_EXIT_FAIL);
	}
	return p;
}

/**
 * bt_strdup() - strdup(), or exit
 * @s: the string
 *
 * Return: the copy.
 */
char *bt_strdup(const char *s)
{
	size_t len = strlen(s) + 1;

	return memcpy(bt_alloc(len), s, len);
}

static int bt_number(const char *s, unsigned long max, unsigned long *v)
{
	unsigned long long n;
	int shift = 0;
	char *end;

	errno = 0;
	n = strtoull(s, &end, 0);
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	if (shift) {
		end++;
		/* A number that the suffix would overflow is out of range. */
		if (n > max >> shift)
			n = (unsigned long long)max + 1;
		else
			n <<= shift;
	}
	if (errno || end == s || *end || *s == '-' || n > max) {
		bt_err("bad number '%s' (0 to %lu)", s, max);
		return -1;
	}
	*v = n;
	return 0;
}

enum { OPT_ALL = 256, OPT_SCHED, OPT_BRANCHES };

static const struct option bt_opts[] = {
	{ "all", no_argument, NULL, OPT_ALL },
	{ "sched", no_argument, NULL, OPT_SCHED },
	{ "branches", no_argument, NULL, OPT_BRANCHES },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int bt_usage_error(void)
{
	fputs(bt_usage, stderr);
	return BT_EXIT_USAGE;
}

static int bt_report(int argc, char **argv, struct bt_view *v, bool n_set)
{
	struct bt_trace t = { 0 };
	u32 i;

	if (argc != 1)
		return bt_usage_error();
	if (bt_file_load(&t, argv[0]))
		return BT_EXIT_FAIL;
	if (!n_set)
		v->nbranches = t.nbranches;
	for (i = 0; i < t.nevents; i++)
		bt_view_event(&t, &t.events[i], v);
	bt_sym_exit();
	bt_trace_free(&t);
	return fflush(stdout) ? BT_EXIT_FAIL : 0;
}

/* Options; returns the index of the first operand, or -1. */
static int bt_parse(int argc, char **argv, struct bt_run *r,
		    const char **out, bool *n_set, bool *s_set)
{
	unsigned long v;
	int c;

	while ((c = getopt_long(argc, argv, "+n:s:o:p:h", bt_opts,
				NULL)) != -1) {
		switch (c) {
		case 'n':
			if (bt_number(optarg, UINT32_MAX, &v))
				return -1;
			r->view.nbranches = v;
			*n_set = true;
			break;
		case 's':
			if (bt_number(optarg, UINT32_MAX, &v))
				return -1;
			r->bts.records = v;
			*s_set = true;
			break;
		case 'o':
			*out = optarg;
			break;
		case 'p':
			if (bt_number(optarg, INT_MAX, &v) || !v)
				return -1;
			r->attach = v;
			break;
		case OPT_ALL:
			r->bts.all = true;
			break;
		case OPT_SCHED:
			r->bts.sched = true;
			break;
		case OPT_BRANCHES:
			r->view.branches = true;
			break;
		case 'h':
			fputs(bt_usage, stdout);
			exit(0);
		default:
			return -1;
		}
	}
	return optind;
}

/**
 * main() - run or attach to a program with branch tracing, or report
 * @argc: number of arguments
 * @argv: the options and PROG ARGS..., or "report" and its options
 *
 * Return: see btrace.1, EXIT STATUS.
 */
int main(int argc, char **argv)
{
	struct bt_run r = { .view.nbranches = BT_DEFAULT_BRANCHES };
	bool n_set = false, s_set = false;
	struct bt_trace t = { 0 };
	const char *out = NULL;
	int first, status;

	if (argc > 1 && !strcmp(argv[1], "report")) {
		argv[1] = argv[0];
		first = bt_parse(argc - 1, argv + 1, &r, &out, &n_set, &s_set);
		if (first < 0 || out || r.attach || s_set || r.bts.all ||
		    r.bts.sched)
			return bt_usage_error();
		return bt_report(argc - 1 - first, argv + 1 + first, &r.view,
				 n_set);
	}
	first = bt_parse(argc, argv, &r, &out, &n_set, &s_set);
	if (first < 0 || (r.attach ? first < argc : first >= argc))
		return bt_usage_error();
	r.argv = argv + first;
	r.bts.signal = SIGRTMIN + 6;
	if (bt_bts_size(&r.bts, s_set))
		return BT_EXIT_USAGE;

	t.nbranches = r.view.nbranches;
	t.all = r.bts.all;
	status = bt_run(&t, &r);
	if (out && t.nthreads && bt_file_save(&t, out))
		status = status ? status : BT_EXIT_FAIL;
	bt_sym_exit();
	bt_trace_free(&t);
	if (fflush(stdout))
		return BT_EXIT_FAIL;
	return status;
}
