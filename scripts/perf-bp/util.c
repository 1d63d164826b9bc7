// SPDX-License-Identifier: GPL-2.0
/*
 * The few functions of perf's util/ that the breakpoint tests call,
 * written for x86_64 without the rest of perf.  Their declarations are
 * perf's own headers (util/debug.h, util/cloexec.h) or the stand-in
 * parse-events.h beside this file.
 */
#include <stdarg.h>
#include <stdio.h>
#include <linux/perf_event.h>

#include "debug.h"
#include "cloexec.h"
#include "parse-events.h"

/* As "perf test -v": the tests' pr_debug() lines are their diagnosis. */
int verbose = 1;

/**
 * eprintf() - print a message of the tests on stderr
 * @level: the verbosity the message needs
 * @var: the verbosity in force
 * @fmt: printf format of the message
 *
 * Return: the number of characters printed, 0 if the message was dropped.
 */
int eprintf(int level, int var, const char *fmt, ...)
{
	va_list args;
	int ret;

	if (var < level)
		return 0;
	va_start(args, fmt);
	ret = vfprintf(stderr, fmt, args);
	va_end(args);
	return ret;
}

/**
 * perf_event_open_cloexec_flag() - the flag that opens a perf fd close-on-exec
 *
 * perf probes for it because kernels before 3.14 reject the flag; every
 * kernel this harness boots has it.
 *
 * Return: PERF_FLAG_FD_CLOEXEC.
 */
unsigned long perf_event_open_cloexec_flag(void)
{
	return PERF_FLAG_FD_CLOEXEC;
}

/**
 * default_breakpoint_len() - bp_len of an execute breakpoint
 *
 * Return: sizeof(long), as perf has it on x86_64.
 */
size_t default_breakpoint_len(void)
{
	return sizeof(long);
}
