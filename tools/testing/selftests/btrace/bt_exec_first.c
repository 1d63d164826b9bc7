// SPDX-License-Identifier: GPL-2.0
/*
 * btrace selftest target: first_before_exec() executes bt_exec_second
 * (from the same directory), whose second_after_exec() exits with 7.
 * The Makefile compiles with -O0 -fno-inline: no function is inlined.
 */
#include <stdio.h>
#include <unistd.h>

/**
 * first_before_exec() - Execute ./bt_exec_second.
 *
 * Returns only if the exec fails, after printing why.
 */
void first_before_exec(void)
{
	char *const argv[] = { "bt_exec_second", NULL };

	execv("./bt_exec_second", argv);	/* MARK FIRST_EXEC */
	perror("execv ./bt_exec_second");
}

/**
 * main() - Execute bt_exec_second from first_before_exec().
 *
 * Return: 1, if the exec failed.
 */
int main(void)
{
	first_before_exec();
	return 1;
}
