// SPDX-License-Identifier: GPL-2.0
/*
 * btrace selftest target: main -> func_a -> func_b -> func_c, and func_c
 * writes to FAULT_ADDR: a SIGSEGV whose faulting address is known.  The
 * MARK comments name the lines that btrace_test.sh expects (the Makefile
 * turns them into line numbers).  With an argument N it exits with N
 * from func_c instead.  The Makefile compiles with -O0 -fno-inline: every
 * function keeps its own frame and every access to sink stays.
 */
#include <stdlib.h>

#define FAULT_ADDR 0x1234

static int sink;
static int exit_code = -1;

/**
 * func_c() - Exit with exit_code if one was given, else write to @p.
 * @p: the address to write to, FAULT_ADDR
 */
void func_c(int *p)
{
	sink++;
	if (exit_code >= 0)
		exit(exit_code);	/* MARK C_EXIT */
	*p = 42;			/* MARK C_FAULT */
}

/**
 * func_b() - Call func_c().
 * @p: the address for func_c()
 */
void func_b(int *p)
{
	sink++;
	func_c(p);			/* MARK B_CALL */
}

/**
 * func_a() - Call func_b().
 * @p: the address for func_b()
 */
void func_a(int *p)
{
	sink++;
	func_b(p);			/* MARK A_CALL */
}

/**
 * main() - Fault at FAULT_ADDR in func_c(), or exit from it.
 * @argc: the number of arguments
 * @argv: the arguments; argv[1], if any, is the exit code for func_c()
 *
 * Return: 0, but func_c() faults or exits before.
 */
int main(int argc, char **argv)
{
	if (argc > 1)
		exit_code = atoi(argv[1]);
	func_a((int *)FAULT_ADDR);	/* MARK MAIN_CALL */
	return 0;
}
