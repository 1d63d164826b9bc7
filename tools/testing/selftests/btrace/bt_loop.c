// SPDX-License-Identifier: GPL-2.0
/*
 * btrace selftest target.
 *   bt_loop count: count_loop() runs a do-while loop of LOOPS iterations
 *     with no other branch in it, so its back edge is taken LOOPS - 1
 *     times, then the program exits with 0.
 *   bt_loop spin: spin_forever() loops until killed, calling spin_step().
 * The Makefile compiles with -O0 -fno-inline: every function keeps its own
 * frame and every access to sink stays.
 */
#include <string.h>

#define LOOPS 100000

static long sink;

/**
 * count_loop() - Run a do-while loop of LOOPS iterations.
 */
void count_loop(void)
{
	long i = 0;

	do {
		sink += i;
	} while (++i < LOOPS);	/* MARK BACK_EDGE */
}

/**
 * spin_step() - One step of spin_forever().
 */
void spin_step(void)
{
	sink++;			/* MARK SPIN_STEP */
}

/**
 * spin_forever() - Call spin_step() until killed.
 */
void spin_forever(void)
{
	for (;;)
		spin_step();
}

/**
 * main() - Run count_loop(), or spin_forever() if argv[1] is "spin".
 * @argc: the number of arguments
 * @argv: the arguments; argv[1] is "count" or "spin"
 *
 * Return: 0, after count_loop().
 */
int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "spin"))
		spin_forever();
	count_loop();
	return 0;
}
