// SPDX-License-Identifier: GPL-2.0
/*
 * btrace selftest target: three threads, each in a function of its own
 * (thread_alpha, thread_beta, thread_gamma), that exit normally.
 * The Makefile compiles with -O0 -fno-inline: every function keeps its own
 * frame and every access to sink stays.
 */
#include <pthread.h>

static long sink;

static void spin(long n)
{
	for (long i = 0; i < n; i++)
		sink += i;
}

/**
 * thread_alpha() - The first thread: spin 100 times.
 * @arg: returned as is
 *
 * Return: @arg.
 */
void *thread_alpha(void *arg)
{
	spin(100);		/* MARK ALPHA */
	return arg;
}

/**
 * thread_beta() - The second thread: spin 200 times.
 * @arg: returned as is
 *
 * Return: @arg.
 */
void *thread_beta(void *arg)
{
	spin(200);		/* MARK BETA */
	return arg;
}

/**
 * thread_gamma() - The third thread: spin 300 times.
 * @arg: returned as is
 *
 * Return: @arg.
 */
void *thread_gamma(void *arg)
{
	spin(300);		/* MARK GAMMA */
	return arg;
}

/**
 * main() - Run thread_alpha(), thread_beta() and thread_gamma() in
 * threads of their own and wait for them.
 *
 * Return: 0, or 1 if a thread could not be created.
 */
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
