// SPDX-License-Identifier: GPL-2.0
/*
 * btrace selftest target: executed by bt_exec_first; exits with 7 from
 * second_after_exec().
 */
#include <stdlib.h>

__attribute__((noinline)) void second_after_exec(void)
{
	exit(7);	/* MARK SECOND_EXIT */
}

int main(void)
{
	second_after_exec();
	return 1;
}
