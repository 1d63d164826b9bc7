// SPDX-License-Identifier: GPL-2.0
/*
 * A program for btrace's tests: "victim MODE [ARG]", MODE one of crash,
 * abort, exit, threads, fork, spin, gp, ignore, seccomp, zombie SECONDS,
 * forks N, dlopen LIB, vdso.  Each mode ends in a known function, so a
 * test can look for it.  Build it with -O0, so that every call stays a
 * call.  Built with -shared -fPIC -DVICTIM_LIB, it is the library of
 * "dlopen".
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#ifdef VICTIM_LIB
/**
 * victim_lib_spin() - spin in a library that is loaded late
 *
 * Return: never.
 */
int victim_lib_spin(void)
{
	int n = 0;

	/* The barrier keeps the loop, and its branch, in the library. */
	for (;;)
		asm volatile("" : "+r" (n));
	return n;
}
#else

static int victim_leaf(int n)
{
	return n * 3 + 1;
}

static int victim_recurse(int n)
{
	return n ? victim_recurse(n - 1) + victim_leaf(n) : 0;
}

/* @p is NULL, which the compiler cannot know. */
static void victim_fault(int *p)
{
	*p = victim_recurse(3);
}

/* A non-canonical address: #GP, SIGSEGV with SI_KERNEL and no address. */
static void victim_gp(void)
{
	int *p = (int *)0x8000000000000000UL;

	/* Through an opaque pointer, so the store is not optimized away. */
	asm volatile("" : "+r" (p));
	*p = victim_recurse(1);
}

static void *victim_thread(void *arg)
{
	return (void *)(long)victim_recurse(4);
}

static void *victim_spinner(void *arg)
{
	for (;;)
		victim_recurse(2);
	return NULL;
}

/* A filter of the program's own that asks a tracer about getppid(). */
static int victim_seccomp(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE | 42),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = 4, .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return 1;
	/* Without a tracer that handles it, the call fails with ENOSYS. */
	errno = 0;
	if (syscall(__NR_getppid) != -1 || errno != ENOSYS)
		return 1;
	return victim_recurse(2) == 11 ? 7 : 1;
}

static int victim_forks(int n)
{
	int status;

	while (n-- > 0) {
		if (!fork())
			_exit(victim_recurse(2) == 11 ? 3 : 4);
		wait(&status);
	}
	return victim_recurse(2) == 11 ? 7 : 1;
}

static int victim_dlopen(const char *lib)
{
	int (*spin)(void);
	void *h;

	sleep(1);
	h = dlopen(lib, RTLD_NOW);
	spin = h ? (int (*)(void))dlsym(h, "victim_lib_spin") : NULL;
	return spin ? spin() : 1;
}

static int victim_vdso(void)
{
	struct timespec ts;
	int i;

	for (i = 0; i < 3; i++)
		clock_gettime(CLOCK_MONOTONIC, &ts);
	return victim_recurse(2) == 11 ? 7 : 1;
}

/**
 * main() - do what the mode says
 * @argc: number of arguments
 * @argv: the mode and its argument
 *
 * Return: 7 for a mode that ends well (fork: 3), 1 if it went wrong.
 */
int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "exit";
	const char *arg = argc > 2 ? argv[2] : "0";
	pthread_t th;
	int status;

	if (!strcmp(mode, "crash"))
		victim_fault((int *)(long)(argc - 2));
	if (!strcmp(mode, "gp"))
		victim_gp();
	if (!strcmp(mode, "abort")) {
		victim_recurse(2);
		abort();
	}
	if (!strcmp(mode, "ignore")) {	/* not fatal, not a crash */
		signal(SIGSEGV, SIG_IGN);
		raise(SIGSEGV);
	}
	if (!strcmp(mode, "seccomp"))
		return victim_seccomp();
	if (!strcmp(mode, "threads")) {
		pthread_create(&th, NULL, victim_thread, NULL);
		pthread_join(th, NULL);
	}
	if (!strcmp(mode, "spin"))	/* until killed: for -p */
		victim_spinner(NULL);
	if (!strcmp(mode, "zombie")) {	/* the main thread exits, later */
		pthread_create(&th, NULL, victim_spinner, NULL);
		sleep(atoi(arg));
		pthread_exit(NULL);
	}
	if (!strcmp(mode, "forks"))
		return victim_forks(atoi(arg));
	if (!strcmp(mode, "dlopen"))
		return victim_dlopen(arg);
	if (!strcmp(mode, "vdso"))
		return victim_vdso();
	if (!strcmp(mode, "selfstop")) {	/* job control: stays stopped */
		raise(SIGSTOP);
		if (write(1, "continued\n", 10) != 10)
			return 1;
	}
	if (!strcmp(mode, "fork")) {
		if (!fork())
			_exit(victim_recurse(2) == 11 ? 3 : 4);
		wait(&status);
		return WEXITSTATUS(status);
	}
	return victim_recurse(2) == 11 ? 7 : 1;
}
#endif /* VICTIM_LIB */
