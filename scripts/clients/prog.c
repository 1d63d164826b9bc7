// SPDX-License-Identifier: GPL-2.0
/*
 * The program the real clients (gdb, perf) observe in the guest; see
 * scripts/clients/README.  Built -O0 -g -static on the host, so that its
 * functions, their order and its addresses are known there (nm).
 *
 *   prog calls       calls -> alpha -> beta -> gamma, back, then done()
 *   prog writes N    N stores to the global "counter", nothing else
 *                    written there
 *   prog slots N     N stores to each of the 8 words of "slots"
 *   prog spin N      a loop of N iterations of two instructions, one of
 *                    them a taken branch but the last
 */
#include <stdlib.h>
#include <string.h>

/* Not libm's gamma(): built with -fno-builtin-gamma. */
int gamma(int x);

#define noinline __attribute__((noinline))
#define __aligned(x) __attribute__((aligned(x)))

/* -O0: every store of the program is made, without volatile. */
unsigned long counter;
unsigned long slots[8] __aligned(64);

noinline int gamma(int x)
{
	return x * 3;
}

noinline int beta(int x)
{
	return gamma(x + 1) + 1;
}

noinline int alpha(int x)
{
	return beta(x * 2) - 1;
}

noinline void done(int x)
{
	counter = x;
}

/* Break here: what follows, up to done(), is the known sequence. */
noinline void calls(void)
{
	done(alpha(1));
}

noinline void writes(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		counter = i;
}

noinline void slots_write(unsigned long n)
{
	unsigned long i;
	int s;

	for (i = 0; i < n; i++)
		for (s = 0; s < 8; s++)
			slots[s] = i;
}

/* Exactly 2 * n instructions and n branches (n - 1 of them taken). */
noinline void spin(unsigned long n)
{
	if (!n)
		return;
	asm volatile("1:\n\t"
		     "dec %0\n\t"
		     "jnz 1b"
		     : "+r" (n) : : "cc");
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 0) : 0;

	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "calls"))
		calls();
	else if (!strcmp(argv[1], "writes"))
		writes(n);
	else if (!strcmp(argv[1], "slots"))
		slots_write(n);
	else if (!strcmp(argv[1], "spin"))
		spin(n);
	else
		return 2;
	return 0;
}
