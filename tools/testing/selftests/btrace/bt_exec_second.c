// SPDX-License-Identifier: GPL-2.0
/*
 * btrace selftest target: executed by bt_exec_first; exits with 7 from
 * second_after_exec().  The Makefile compiles with -O0 -fno-inline: no
 * function is inlined.
 */
#include <stdlib.h>

/**
 * second_after_exec() - Exit with 7.
 */
void second_after_exec(void)
{
	exit(7);	/* MARK SECOND_EXIT */
}

/**
 * main() - Exit with 7 from second_after_exec().
 *
 * Return: 1, never: second_after_exec() exits.
 */
int main(void)
{
	second_after_exec();
	return 1;
}
