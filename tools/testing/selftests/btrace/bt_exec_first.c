// SPDX-License-Identifier: GPL-2.0
/*
 * btrace selftest target: first_before_exec() executes bt_exec_second
 * (from the same directory), whose second_after_exec() exits with 7.
 */
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline)) void first_before_exec(void)
{
	char *argv[] = { "bt_exec_second", NULL };

	execv("./bt_exec_second", argv);	/* MARK FIRST_EXEC */
	perror("execv ./bt_exec_second");
}

int main(void)
{
	first_before_exec();
	return 1;
}
