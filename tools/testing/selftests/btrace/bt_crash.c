// SPDX-License-Identifier: GPL-2.0
/*
 * btrace selftest target: main -> func_a -> func_b -> func_c, and func_c
 * writes to FAULT_ADDR: a SIGSEGV whose faulting address is known.  The
 * MARK comments name the lines that btrace_test.sh expects (build.sh
 * turns them into line numbers).  With an argument N it exits with N
 * from func_c instead.
 */
#include <stdlib.h>

#define FAULT_ADDR 0x1234

static volatile int sink;
static int exit_code = -1;

__attribute__((noinline)) void func_c(int *p)
{
	sink++;
	if (exit_code >= 0)
		exit(exit_code);	/* MARK C_EXIT */
	*p = 42;			/* MARK C_FAULT */
}

__attribute__((noinline)) void func_b(int *p)
{
	sink++;
	func_c(p);			/* MARK B_CALL */
}

__attribute__((noinline)) void func_a(int *p)
{
	sink++;
	func_b(p);			/* MARK A_CALL */
}

int main(int argc, char **argv)
{
	if (argc > 1)
		exit_code = atoi(argv[1]);
	func_a((int *)FAULT_ADDR);	/* MARK MAIN_CALL */
	return 0;
}
