// SPDX-License-Identifier: GPL-2.0
/*
 * btrace selftest target.
 *   bt_loop count: count_loop() runs a do-while loop of LOOPS iterations
 *     with no other branch in it, so its back edge is taken LOOPS - 1
 *     times, then the program exits with 0.
 *   bt_loop spin: spin_forever() loops until killed, calling spin_step().
 */
#include <string.h>

#define LOOPS 100000

static volatile long sink;

__attribute__((noinline)) void count_loop(void)
{
	long i = 0;

	do {
		sink += i;
	} while (++i < LOOPS);	/* MARK BACK_EDGE */
}

__attribute__((noinline)) void spin_step(void)
{
	sink++;			/* MARK SPIN_STEP */
}

__attribute__((noinline)) void spin_forever(void)
{
	for (;;)
		spin_step();
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "spin"))
		spin_forever();
	count_loop();
	return 0;
}
