// SPDX-License-Identifier: GPL-2.0
/*
 * btrace selftest target.
 *   bt_stop: stop_loop() runs a do-while loop of LOOPS iterations with
 *     no other branch in it, so its back edge is taken LOOPS - 1 times,
 *     then after_stop() prints "bt_stop: PID continued" and exits with 5.
 *   bt_stop SIG (STOP, TSTP, TTIN or TTOU): the same, but between the two
 *     it prints "bt_stop: PID stopping with SIGSIG" and stops itself with
 *     that signal, in a process group of its own.
 * Each line is written at once.  The Makefile compiles with -O0
 * -fno-inline: every function keeps its own frame and every access to
 * sink stays.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kselftest.h"

#define LOOPS 3000

static long sink;

/**
 * stop_loop() - Run a do-while loop of LOOPS iterations.
 */
void stop_loop(void)
{
	long i = 0;

	do {
		sink += i;
	} while (++i < LOOPS);		/* MARK STOP_EDGE */
}

/**
 * after_stop() - Say so and exit with 5.
 */
void after_stop(void)
{
	printf("bt_stop: %d continued\n", (int)getpid());
	fflush(stdout);
	exit(5);			/* MARK AFTER_STOP */
}

/**
 * stop_with() - Stop with the signal that @name names.
 * @name: STOP, TSTP, TTIN or TTOU
 *
 * Return: 0 once continued, -1 if @name is none of these.
 */
int stop_with(const char *name)
{
	static const struct { const char *name; int sig; } sigs[] = {
		{ "STOP", SIGSTOP }, { "TSTP", SIGTSTP },
		{ "TTIN", SIGTTIN }, { "TTOU", SIGTTOU },
	};
	int sig = 0;

	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		if (!strcmp(name, sigs[i].name))
			sig = sigs[i].sig;
	if (!sig) {
		fprintf(stderr, "bt_stop: unknown signal %s\n", name);
		return -1;
	}
	/*
	 * A group of its own, whose parent (btrace) is in another group of
	 * the same session: in an orphaned process group, as the caller's
	 * might be, the kernel discards SIGTSTP, SIGTTIN and SIGTTOU.
	 */
	if (setpgid(0, 0))
		perror("bt_stop: setpgid");
	printf("bt_stop: %d stopping with SIG%s\n", (int)getpid(), name);
	fflush(stdout);
	raise(sig);			/* MARK STOP_RAISE */
	return 0;
}

/**
 * main() - stop_loop(), stop_with() argv[1] if given, after_stop().
 * @argc: the number of arguments
 * @argv: the arguments; argv[1], if any, is STOP, TSTP, TTIN or TTOU
 *
 * Return: 2 if the signal is unknown; else after_stop() exits with 5.
 */
int main(int argc, char **argv)
{
	stop_loop();
	if (argc > 1 && stop_with(argv[1]))
		return 2;
	after_stop();
	return 0;
}
