// SPDX-License-Identifier: GPL-2.0
/*
 * btrace selftest target: three threads, each in a function of its own
 * (thread_alpha, thread_beta, thread_gamma), that exit normally.
 */
#include <pthread.h>

static volatile long sink;

__attribute__((noinline)) static void spin(long n)
{
	for (long i = 0; i < n; i++)
		sink += i;
}

__attribute__((noinline)) void *thread_alpha(void *arg)
{
	spin(100);		/* MARK ALPHA */
	return arg;
}

__attribute__((noinline)) void *thread_beta(void *arg)
{
	spin(200);		/* MARK BETA */
	return arg;
}

__attribute__((noinline)) void *thread_gamma(void *arg)
{
	spin(300);		/* MARK GAMMA */
	return arg;
}

int main(void)
{
	void *(*fn[3])(void *) = { thread_alpha, thread_beta, thread_gamma };
	pthread_t t[3];

	for (int i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, fn[i], NULL))
			return 1;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	return 0;
}
