// SPDX-License-Identifier: GPL-2.0
/*
 * A randomized, seeded, bounded stress of PTRACE_BTS_*.
 *
 * Several tracers (worker processes, half of them unprivileged when the
 * program starts as root) drive tracees that branch, fork, clone threads,
 * exec and exit, with random PTRACE_BTS_* requests, valid and not, on
 * stopped and running tracees; they kill tracees (during DRAIN too),
 * detach them, let a tracer die with its tracee configured, and open and
 * close perf's BTS and precise events beside them, while cpu 1 goes
 * offline and online.  Each check is one of the documented rules of
 * Documentation/arch/x86/ptrace-bts.rst.
 *
 * A second phase injects allocation failures (failslab, fail_page_alloc,
 * for this program's tracer only) into PTRACE_BTS_CONFIG and perf's BTS
 * event opens, then asks kmemleak for new leaks.
 *
 * Usage: ptrace_bts_stress [-s SEED] [-n OPS] [-t SECONDS] [-w WORKERS]
 *                          [-f FAULT_TRIALS] [-H] [-p MS] [-v]
 * -H: no cpu hotplug (which needs root, as fault injection does).
 * -p: the mean pause between two hotplug cycles, 120 ms unless given; a
 *     cycle stops every cpu for a while, so a long run pauses longer.
 * -v: print what each tracer sees and does (the last lines always go
 *     with a failure).
 * The seed and the op count are printed; a failure prints how to replay.
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Not <sys/ptrace.h>: its enum clashes with the kernel's numbers. */
#include <linux/perf_event.h>
#include <linux/ptrace.h>
#include <asm/ptrace-bts.h>

#include "../kselftest.h"

#define REC		((unsigned int)sizeof(struct bts_struct))
/* The least *data* of CONFIG and STATUS, and the structure this test knows. */
#define CFG		((unsigned int)PTRACE_BTS_CONFIG_SIZE_VER0)
#define CFG1		((unsigned int)sizeof(struct ptrace_bts_config))
#define PAGE		4096U	/* the most *data* may be: one page */
#define NOBODY		65534
#define MAX_WORKERS	8
#define MAX_TRACEES	48
#define MAX_LIVE	4
#define MAX_PERF	4
#define ARENA		(PTRACE_BTS_SIZE_MAX + 2 * 4096)
#define RECORDING	(PTRACE_BTS_O_TRACE | PTRACE_BTS_O_SCHED | \
			 PTRACE_BTS_O_SIGNAL)

/* The checks, one TAP case each. */
enum check {
	C_ERRNO,
	C_STATUS_KEPT,
	C_STATUS_TAIL,
	C_CONFIG_TAIL,
	C_RECORDS,
	C_COUNTS,
	C_CHILD_EMPTY,
	C_EXEC_KEEPS,
	C_TRACER_DEATH,
	C_SIGNALS,
	C_EXCLUSION,
	C_BRANCHES,
	C_UNPRIV,
	C_WORKERS,
	C_HOTPLUG,
	C_FAULTS,
	C_KMEMLEAK,
	NR_CHECKS
};

static const char * const check_name[NR_CHECKS] = {
	[C_ERRNO]	 = "errno",
	[C_STATUS_KEPT]	 = "status_kept",
	[C_STATUS_TAIL]	 = "status_tail",
	[C_CONFIG_TAIL]	 = "config_tail",
	[C_RECORDS]	 = "records",
	[C_COUNTS]	 = "counts",
	[C_CHILD_EMPTY]	 = "child_empty",
	[C_EXEC_KEEPS]	 = "exec_keeps",
	[C_TRACER_DEATH] = "tracer_death",
	[C_SIGNALS]	 = "no_stray_signal",
	[C_EXCLUSION]	 = "perf_exclusion",
	[C_BRANCHES]	 = "branches",
	[C_UNPRIV]	 = "unprivileged",
	[C_WORKERS]	 = "workers",
	[C_HOTPLUG]	 = "cpu_hotplug",
	[C_FAULTS]	 = "fault_injection",
	[C_KMEMLEAK]	 = "kmemleak",
};

static const char * const check_what[NR_CHECKS] = {
	[C_ERRNO]	 = "every request returned success or a documented errno",
	[C_STATUS_KEPT]	 = "STATUS unchanged after a failed CONFIG",
	[C_STATUS_TAIL]	 = "a larger STATUS zeroes the bytes beyond the structure",
	[C_CONFIG_TAIL]	 = "a larger CONFIG works with a zero tail, E2BIG otherwise",
	[C_RECORDS]	 = "records well formed, no kernel address",
	[C_COUNTS]	 = "SIZE, GET, DRAIN and CLEAR agree",
	[C_CHILD_EMPTY]	 = "a new child or thread of a tracee starts with nothing",
	[C_EXEC_KEEPS]	 = "exec keeps the configuration",
	[C_TRACER_DEATH] =
		"a dead tracer's tracee is untraced and not signalled; a new tracer starts anew",
	[C_SIGNALS]	 = "no task killed by a signal nobody sent",
	[C_EXCLUSION]	 = "perf's BTS and PTRACE_BTS_O_TRACE exclude each other",
	[C_BRANCHES]	 = "PTRACE_BTS_O_TRACE records branches",
	[C_UNPRIV]	 = "an unprivileged tracer gets records without kernel addresses",
	[C_WORKERS]	 = "no tracer crashed or hung",
	[C_HOTPLUG]	 = "cpu 1 went offline and online under the load",
	[C_FAULTS]	 = "allocation failures return ENOMEM and change nothing",
	[C_KMEMLEAK]	 = "no new kmemleak report",
};

/* What the workers tell the parent, in shared memory. */
struct shared {
	int fails[NR_CHECKS];
	int passes[NR_CHECKS];
	char first[NR_CHECKS][320];
	long ops[MAX_WORKERS];
	int unpriv_records;
	int branch_records;
	int trace_configs;
};

static struct shared *sh;
static uint64_t opt_seed;
static long opt_ops = 2000;
static int opt_secs = 60;
static int opt_workers = 3;
static int opt_faults = 200;
static bool opt_hotplug = true;
static unsigned int opt_pause_ms = 120;
static bool opt_verbose;

static bool has_bts;
static bool is_root;
static char *self_exe;
static int cur_worker = -1;
static long cur_op;
static const char *cur_what = "setup";

/*
 * What this tracer saw and did last, kept always: a failure or a hang
 * prints it, since a replay of a run with several workers is not exact.
 * -v prints every line as it happens as well.
 */
#define HISTORY		48
#define HISTORY_LINE	120
static char history[HISTORY][HISTORY_LINE];
static unsigned int history_next;
static bool history_shown;

static void __printf(1, 2) trace(const char *fmt, ...)
{
	char *line = history[history_next++ % HISTORY];
	va_list ap;
	int n;

	n = snprintf(line, HISTORY_LINE, "w%d op %ld: ", cur_worker, cur_op);
	va_start(ap, fmt);
	vsnprintf(line + n, HISTORY_LINE - n, fmt, ap);
	va_end(ap);
	if (opt_verbose)
		fprintf(stderr, "%s\n", line);
}

/* Print the history once; only calls a signal handler may make. */
static void show_history(void)
{
	unsigned int i = history_next > HISTORY ? history_next - HISTORY : 0;
	char out[HISTORY_LINE + 8];
	int n;

	if (history_shown)
		return;
	history_shown = true;
	for (; i < history_next; i++) {
		n = strlen(history[i % HISTORY]);
		memcpy(out, "#   ", 4);
		memcpy(out + 4, history[i % HISTORY], n);
		out[n + 4] = '\n';
		if (write(1, out, n + 5) < 0)
			return;
	}
}

/*
 * Random numbers: a seed per worker from splitmix64, then xorshift64*.
 */
static uint64_t splitmix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dULL;
}

static unsigned int below(unsigned int n)
{
	return n ? rnd() % n : 0;
}

static bool chance(unsigned int percent)
{
	return below(100) < percent;
}

static void fail(enum check c, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	trace("FAIL %s: %s", check_name[c], msg);
	if (__atomic_fetch_add(&sh->fails[c], 1, __ATOMIC_RELAXED) < 5) {
		printf("# FAIL %s: %s (seed %llu, worker %d, op %ld: %s)\n",
		       check_name[c], msg, (unsigned long long)opt_seed,
		       cur_worker, cur_op, cur_what);
		fflush(stdout);
		show_history();
	}
	if (!sh->first[c][0])
		snprintf(sh->first[c], sizeof(sh->first[c]),
			 "%s (worker %d op %ld: %s)", msg, cur_worker, cur_op,
			 cur_what);
	fflush(stdout);
}

static void pass(enum check c)
{
	__atomic_fetch_add(&sh->passes[c], 1, __ATOMIC_RELAXED);
}

static long bts(long request, pid_t pid, unsigned long addr,
		unsigned long data)
{
	return syscall(SYS_ptrace, request, pid, addr, data);
}

static bool cpu_has_bts(void)
{
	bool bts = false, dtes64 = false;
	char line[4096];
	FILE *f;

	f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		bts = strstr(line, " bts ") || strstr(line, " bts\n");
		dtes64 = strstr(line, " dtes64 ") || strstr(line, " dtes64\n");
		break;
	}
	fclose(f);
	return bts && dtes64;
}

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;
	int err;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	err = n < 0 ? -errno : 0;
	close(fd);
	return err;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

/*
 * Tracees: branches, system calls, sleeps, forks, threads, exec, exit,
 * driven by their own random numbers.
 */
static int tracee_threads;

static void busy(unsigned int n)
{
	unsigned int i, x = 0;

	for (i = 0; i < n; i++) {
		/* Branches the compiler must keep. */
		asm volatile("" : "+r" (x));
		if (i & 1)
			x += i;
		else
			x ^= i;
		if (!(i & 127))
			syscall(SYS_getppid);
	}
}

static void *tracee_thread(void *arg)
{
	busy(2000 + (uintptr_t)arg % 20000);
	usleep(100);
	__atomic_fetch_sub(&tracee_threads, 1, __ATOMIC_RELAXED);
	return NULL;
}

static __noreturn void tracee_main(uint64_t seed)
{
	char arg[32];
	pthread_t th;
	pid_t pid;

	rng = splitmix(seed) | 1;
	signal(SIGCHLD, SIG_IGN);
	for (;;) {
		unsigned int r = below(1000);

		if (r < 8) {
			pid = fork();
			if (!pid) {
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				busy(below(30000));
				if (chance(30))
					usleep(below(2000));
				_exit(0);
			}
		} else if (r < 16) {
			if (__atomic_load_n(&tracee_threads, __ATOMIC_RELAXED) < 3) {
				__atomic_fetch_add(&tracee_threads, 1, __ATOMIC_RELAXED);
				if (pthread_create(&th, NULL, tracee_thread,
						   (void *)(uintptr_t)rnd()))
					__atomic_fetch_sub(&tracee_threads, 1,
							   __ATOMIC_RELAXED);
				else
					pthread_detach(th);
			}
		} else if (r < 19) {
			snprintf(arg, sizeof(arg), "%llu",
				 (unsigned long long)rnd());
			execl(self_exe, self_exe, "--tracee", arg, (char *)NULL);
			_exit(97);
		} else if (r < 21) {
			exit(0);
		} else if (r < 150) {
			usleep(below(300));
		} else {
			busy(below(5000));
		}
	}
}

/*
 * Buffers: good ones (aligned or not), NULL, unmapped, read-only, and
 * ones that run into an unmapped page.
 */
enum buf_kind { B_GOOD, B_UNALIGNED, B_NULL, B_NONE, B_EDGE, B_RDONLY,
		B_KERNEL, NR_BUF_KINDS };

static char *arena;		/* ARENA bytes, then a PROT_NONE page */
static char *small;		/* 3 pages, then a PROT_NONE page */
static char *rdonly;		/* one read-only page */

static bool buf_good(enum buf_kind k)
{
	return k == B_GOOD || k == B_UNALIGNED;
}

/* A buffer of @len bytes of kind @k; @out: the kernel writes to it. */
static char *get_buf(enum buf_kind k, size_t len, bool big)
{
	char *base = big ? arena : small;
	size_t size = big ? ARENA : 3 * 4096;

	switch (k) {
	case B_GOOD:
		return len <= size ? base : NULL;
	case B_UNALIGNED:
		return len + 7 <= size ? base + 1 + below(7) : NULL;
	case B_NULL:
		return NULL;
	case B_NONE:
		return base + size + below(64);
	case B_EDGE:
		/* The last byte, at least, is past the end. */
		return len ? base + size - len + 1 + below(len) : base + size;
	case B_RDONLY:
		return rdonly;
	case B_KERNEL:
		return (char *)(uintptr_t)(sizeof(long) == 8 ?
					   0xffffffff81000000ULL : 0xfffff000UL);
	default:
		return NULL;
	}
}

static enum buf_kind pick_buf(unsigned int bad_percent)
{
	if (!chance(bad_percent))
		return chance(80) ? B_GOOD : B_UNALIGNED;
	return B_NULL + below(NR_BUF_KINDS - B_NULL);
}

/* Whether a buffer of kind @k can be written (@out) or read. */
static bool buf_usable(enum buf_kind k, bool out, size_t len)
{
	if (buf_good(k))
		return true;
	if (k == B_RDONLY)
		return !out && len <= 4096;
	return false;
}

/*
 * The tracer's view of its tracees.
 */
enum tstate { T_FREE, T_RUN, T_STOP };

struct tracee {
	pid_t tid;
	enum tstate state;
	bool direct;		/* a child of this worker, forked by spawn() */
	bool exit_stop;		/* at PTRACE_EVENT_EXIT */
	bool fresh;		/* new child or thread: nothing configured */
	bool exec_check;	/* after exec: the configuration must hold */
	bool killed;		/* we sent SIGKILL */
	int inject;		/* signal to deliver when resumed */
	long known;		/* the number of records, -1 if unknown */
	unsigned long long start;	/* its start time, to tell a reused id */
	struct ptrace_bts_config m;	/* what STATUS must say */
};

static struct tracee tr[MAX_TRACEES];
static int perf_fds[MAX_PERF];
static bool perf_is_bts[MAX_PERF];
static bool unprivileged;

/* In a child: perf's events are the worker's, not to outlive it there. */
static void close_perf(void)
{
	int i;

	for (i = 0; i < MAX_PERF; i++)
		if (perf_fds[i] > 0)
			close(perf_fds[i]);
}

static struct tracee *find(pid_t tid)
{
	int i;

	for (i = 0; i < MAX_TRACEES; i++)
		if (tr[i].state != T_FREE && tr[i].tid == tid)
			return &tr[i];
	return NULL;
}

static unsigned long long proc_start(pid_t tid);

static struct tracee *add(pid_t tid)
{
	int i;

	for (i = 0; i < MAX_TRACEES; i++) {
		if (tr[i].state == T_FREE) {
			memset(&tr[i], 0, sizeof(tr[i]));
			tr[i].tid = tid;
			tr[i].state = T_RUN;
			tr[i].known = 0;
			tr[i].start = proc_start(tid);
			tr[i].m.bts_size = REC;
			return &tr[i];
		}
	}
	return NULL;
}

static int live(void)
{
	int i, n = 0;

	for (i = 0; i < MAX_TRACEES; i++)
		n += tr[i].state != T_FREE;
	return n;
}

static bool overflow_signal(int sig)
{
	return sig == SIGUSR1 || sig == SIGUSR2 || sig >= SIGRTMIN + 4;
}

static void check_death(pid_t pid, int status, const char *who)
{
	if (!WIFSIGNALED(status))
		return;
	if (WTERMSIG(status) == SIGKILL) {
		pass(C_SIGNALS);
		return;
	}
	fail(C_SIGNALS, "%s %d was killed by signal %d, which nobody sent",
	     who, pid, WTERMSIG(status));
}

/* A tracee reported @status to waitpid(). */
static void handle(pid_t tid, int status)
{
	struct tracee *t = find(tid), *c;
	unsigned long msg = 0;
	int event, sig;

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		trace("%d: ended, status %#x (%s)", tid, status,
		      t ? "known" : "new");
		check_death(tid, status, t ? "tracee" : "task");
		if (t)
			t->state = T_FREE;
		return;
	}
	trace("%d: status %#x (%s)", tid, status, t ? "known" : "new");
	if (!WIFSTOPPED(status))
		return;
	if (!t) {
		/* An auto-attached child, before its parent's event. */
		t = add(tid);
		if (!t) {
			kill(tid, SIGKILL);
			return;
		}
		t->fresh = true;
	}
	/*
	 * A new stop means it ran since the last one, even one the model
	 * thought it was still in (a SIGKILL or another thread's exit or
	 * exec wakes a stopped tracee): what it recorded on the way is
	 * unknown.
	 */
	if (t->m.flags & (PTRACE_BTS_O_TRACE | PTRACE_BTS_O_SCHED))
		t->known = -1;
	t->state = T_STOP;
	t->inject = 0;
	event = (unsigned int)status >> 16;
	sig = WSTOPSIG(status);
	switch (event) {
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE:
		if (bts(PTRACE_GETEVENTMSG, tid, 0, (unsigned long)&msg) || !msg)
			break;
		trace("%d: new child %lu", tid, msg);
		if (!find(msg)) {
			c = add(msg);
			if (!c)
				kill(msg, SIGKILL);
			else
				c->fresh = true;
		}
		break;
	case PTRACE_EVENT_EXEC:
		if (bts(PTRACE_GETEVENTMSG, tid, 0, (unsigned long)&msg))
			break;
		trace("%d: exec by %lu", tid, msg);
		if ((pid_t)msg != tid) {
			/* A thread executed: it took the leader's id. */
			c = find(msg);
			if (c) {
				t->m = c->m;
				t->known = c->known;
				t->fresh = c->fresh;
				c->state = T_FREE;
			} else {
				t->known = -1;
				t->fresh = false;
			}
		}
		t->exec_check = true;
		if (t->m.flags & PTRACE_BTS_O_SCHED)
			t->known = -1;
		break;
	case PTRACE_EVENT_EXIT:
		t->exit_stop = true;
		break;
	case PTRACE_EVENT_STOP:
		break;
	case 0:
		if (overflow_signal(sig))
			break;	/* drain-and-suppress, as a debugger does */
		if (sig != SIGSTOP && sig != SIGTRAP)
			t->inject = sig;
		break;
	}
}

/* SIGKILL every task whose parent or tracer this process is. */
static void kill_mine(void)
{
	pid_t me = getpid();
	char path[64], line[128];
	struct dirent *d;
	FILE *f;
	DIR *dir;
	int pid;

	dir = opendir("/proc");
	while (dir && (d = readdir(dir))) {
		pid = atoi(d->d_name);
		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f)) {
			if ((!strncmp(line, "PPid:", 5) && atoi(line + 5) == me) ||
			    (!strncmp(line, "TracerPid:", 10) && atoi(line + 10) == me)) {
				kill(pid, SIGKILL);
				break;
			}
		}
		if (f)
			fclose(f);
	}
	if (dir)
		closedir(dir);
}

/*
 * Kill every tracee and let go of those in a stop already reported: one
 * at its exit stop stays there, SIGKILL or not, until it is continued.
 */
static void kill_stopped(void)
{
	int i;

	for (i = 0; i < MAX_TRACEES; i++) {
		if (tr[i].state != T_STOP)
			continue;
		kill(tr[i].tid, SIGKILL);
		bts(PTRACE_CONT, tr[i].tid, 0, 0);
		tr[i].state = T_RUN;
	}
}

/* Collect what is there; @last: kill and collect everything. */
static void reap(bool last)
{
	int status, idle = 0;
	pid_t pid;

	if (last)
		kill_stopped();
	for (;;) {
		pid = waitpid(-1, &status, __WALL | WNOHANG);
		if (pid < 0 || (!pid && !last))
			return;
		if (!pid) {
			if (++idle % 500 == 0) {
				kill_mine();
				kill_stopped();
			}
			usleep(1000);
			continue;
		}
		idle = 0;
		handle(pid, status);
		if (last && WIFSTOPPED(status)) {
			kill(pid, SIGKILL);
			bts(PTRACE_CONT, pid, 0, 0);
		}
	}
}

/* Wait for @t to stop (or go); Return: whether it is stopped. */
static void resume(struct tracee *t);

/* The state letter of @tid in /proc/TID/stat, '-' if it has none. */
static char proc_state(pid_t tid)
{
	char path[64], buf[256], *p;
	int fd, n;

	snprintf(path, sizeof(path), "/proc/%d/stat", tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return '-';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return '-';
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '-';
}

/* The start time of @tid in /proc/TID/stat (field 22), 0 if it has none. */
static unsigned long long proc_start(pid_t tid)
{
	unsigned long long start = 0;
	char path[64], buf[512], *p;
	int fd, n, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	/* After the name: field 3, the state, then 19 more to the start. */
	for (field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		start = strtoull(p + 1, NULL, 10);
	return start;
}

/* Whether @tid is in a ptrace stop, by /proc. */
static bool traced_stop(pid_t tid)
{
	return proc_state(tid) == 't';
}

/*
 * @t is in a ptrace stop whose report never came: it may have run since the
 * model last saw it, and the stop may be its exit stop, which its siginfo
 * tells.
 */
static void stopped_unreported(struct tracee *t)
{
	const int exit_code = SIGTRAP | (PTRACE_EVENT_EXIT << 8);
	siginfo_t si = { 0 };

	if (t->m.flags & (PTRACE_BTS_O_TRACE | PTRACE_BTS_O_SCHED))
		t->known = -1;
	if (!bts(PTRACE_GETSIGINFO, t->tid, 0, (unsigned long)&si))
		t->exit_stop = si.si_code == exit_code;
	trace("%d: exit stop: %d", t->tid, t->exit_stop);
	t->state = T_STOP;
	t->inject = 0;
}

static bool wait_stop(struct tracee *t)
{
	uint64_t quiet_since = now_ms();
	int status, i;
	pid_t pid;

	/*
	 * Any child: a traced group leader is reported only after its other
	 * threads, which are ours to reap too.
	 */
	while (t->state == T_RUN) {
		/*
		 * A thread at its exit stop may hold up an exec or the group's
		 * exit: let it go.
		 */
		for (i = 0; i < MAX_TRACEES; i++)
			if (&tr[i] != t && tr[i].state == T_STOP &&
			    tr[i].exit_stop)
				resume(&tr[i]);
		pid = waitpid(-1, &status, __WALL | WNOHANG);
		if (pid < 0) {
			t->state = T_FREE;
			return false;
		}
		if (pid > 0) {
			handle(pid, status);
			quiet_since = now_ms();
			continue;
		}
		/*
		 * In time, not in sleeps: a guest starved by its host sleeps
		 * far longer than asked, and the op's alarm would come first.
		 */
		if (now_ms() - quiet_since >= 2000 && traced_stop(t->tid)) {
			/*
			 * Seen on 6.18 as well: an auto-attached child
			 * interrupted at its first stop, stopped, with
			 * no report.  It is stopped all the same.
			 */
			trace("%d: stopped without a report", t->tid);
			stopped_unreported(t);
			break;
		}
		if (now_ms() - quiet_since >= 2000)
			quiet_since = now_ms();
		usleep(1000);
	}
	return t->state == T_STOP;
}

static bool stop(struct tracee *t)
{
	if (t->state == T_STOP)
		return true;
	trace("%d: interrupt", t->tid);
	if (bts(PTRACE_INTERRUPT, t->tid, 0, 0) && errno != ESRCH)
		fail(C_WORKERS, "PTRACE_INTERRUPT: %s", strerror(errno));
	return wait_stop(t);
}

static void resume(struct tracee *t)
{
	if (!t || t->state != T_STOP)
		return;
	if (t->m.flags & (PTRACE_BTS_O_TRACE | PTRACE_BTS_O_SCHED))
		t->known = -1;
	trace("%d: continue with signal %d", t->tid, t->inject);
	if (bts(PTRACE_CONT, t->tid, 0, t->inject)) {
		trace("%d: PTRACE_CONT: %s", t->tid, strerror(errno));
		/* Killed meanwhile: its exit is still to be reaped. */
		t->state = T_RUN;
		return;
	}
	t->exit_stop = false;
	t->state = T_RUN;
}

static const long opts = PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
			 PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC |
			 PTRACE_O_TRACEEXIT;

/* Fork a tracee, seize it, leave it stopped. */
static struct tracee *spawn(void)
{
	int go[2];
	struct tracee *t;
	uint64_t seed = rnd();
	pid_t pid;
	char c;

	if (pipe(go))
		return NULL;
	pid = fork();
	if (pid < 0) {
		close(go[0]);
		close(go[1]);
		return NULL;
	}
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close_perf();
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(0);
		close(go[0]);
		tracee_main(seed);
	}
	close(go[0]);
	if (bts(PTRACE_SEIZE, pid, 0, opts)) {
		fail(C_WORKERS, "PTRACE_SEIZE: %s", strerror(errno));
		kill(pid, SIGKILL);
		close(go[1]);
		waitpid(pid, NULL, 0);
		return NULL;
	}
	t = add(pid);
	if (!t) {
		kill(pid, SIGKILL);
		close(go[1]);
		return NULL;
	}
	t->direct = true;
	trace("%d: spawned", pid);
	if (write(go[1], "g", 1) != 1)
		kill(pid, SIGKILL);
	close(go[1]);
	stop(t);
	return t;
}

/*
 * Requests and what the documentation allows them to return.
 */
/* A bit per errno; EOPNOTSUPP (95) gets bit 62, anything else big 63. */
static uint64_t E(int err)
{
	if (err < 62)
		return 1ULL << err;
	return err == EOPNOTSUPP ? 1ULL << 62 : 1ULL << 63;
}

static const char *req_name(long req)
{
	static const char * const names[] = {
		"CONFIG", "STATUS", "SIZE", "GET", "CLEAR", "DRAIN",
	};

	if (req >= PTRACE_BTS_CONFIG && req <= PTRACE_BTS_DRAIN)
		return names[req - PTRACE_BTS_CONFIG];
	return req == PTRACE_DETACH ? "DETACH" : "?";
}

static uint64_t documented(long req)
{
	switch (req) {
	case PTRACE_BTS_CONFIG:
		return E(EINVAL) | E(E2BIG) | E(EFAULT) | E(EOPNOTSUPP) |
		       E(EBUSY) | E(EPERM) | E(ENOMEM) | E(ESRCH);
	case PTRACE_BTS_STATUS:
		return E(EINVAL) | E(E2BIG) | E(EFAULT) | E(ESRCH);
	case PTRACE_BTS_GET:
		return E(EINVAL) | E(EFAULT) | E(ESRCH);
	case PTRACE_BTS_SIZE:
	case PTRACE_BTS_CLEAR:
		return E(EINVAL) | E(ESRCH);
	case PTRACE_BTS_DRAIN:
		return E(EIO) | E(EFAULT) | E(EINTR) | E(ESRCH);
	case PTRACE_DETACH:
		/* ptrace(2): not stopped (killed meanwhile); a bad signal. */
		return E(ESRCH) | E(EIO);
	}
	/*
	 * ptrace(2) checks that the tracee is stopped before it looks at the
	 * request: an unknown one gets ESRCH too when the tracee was woken
	 * meanwhile, as by its group's exit.
	 */
	return E(EIO) | E(ESRCH);
}

static bool stop_changed(pid_t tid);

/*
 * stop_changed(), giving a tracee that was woken five seconds to report: its
 * exit may wait for a grace period (the buffer it leaves), and a debug kernel
 * on a busy host, stopped each second for cpu hotplug, is slow at that.
 */
static bool stop_changes(pid_t tid)
{
	uint64_t start = now_ms();

	do {
		if (stop_changed(tid))
			return true;
		usleep(1000);
	} while (now_ms() - start < 5000);
	return false;
}

/*
 * @r/@err: what a request returned; @want: the errnos that apply
 * (0: it must succeed); @may: errnos that may come anyway.
 * Return: whether it returned what the documentation allows.
 */
static bool expect(long req, pid_t tid, long r, int err, uint64_t want,
		   uint64_t may, const char *detail)
{
	trace("%s %d (%s): %ld %s", req_name(req), tid, detail, r,
	      r < 0 ? strerror(err) : "");
	if (r >= 0) {
		if (!want) {
			pass(C_ERRNO);
			return true;
		}
		fail(C_ERRNO, "%s on %d (%s) succeeded; expected errno mask %#llx",
		     req_name(req), tid, detail, (unsigned long long)want);
		return false;
	}
	if (!(E(err) & documented(req))) {
		fail(C_ERRNO, "%s on %d (%s): errno %d (%s) is not documented",
		     req_name(req), tid, detail, err, strerror(err));
		return false;
	}
	if ((want | may) & E(err)) {
		pass(C_ERRNO);
		return true;
	}
	/* Its group exited under it: it is on its way to its exit stop. */
	if (err == ESRCH && stop_changes(tid)) {
		pass(C_ERRNO);
		return true;
	}
	fail(C_ERRNO, "%s on %d (%s): %s, expected %s",
	     req_name(req), tid, detail, strerror(err),
	     want ? "another errno" : "success");
	return false;
}

static bool kernel_address(uint64_t a)
{
	return a >> 63;
}

/* The record check of the documentation's "Records". */
static void check_record(struct tracee *t, const struct bts_struct *b)
{
	bool bad = false;

	if (b->qualifier == BTS_BRANCH) {
		bad = kernel_address(b->from) || kernel_address(b->to) ||
		      b->pid || b->clock || !b->from;
		if (!bad)
			__atomic_fetch_add(&sh->branch_records, 1, __ATOMIC_RELAXED);
	} else if (b->qualifier >= BTS_TASK_ARRIVES &&
		   b->qualifier <= BTS_TASK_EXEC) {
		bad = b->from || b->to || !b->clock || !b->pid;
	} else {
		bad = true;
	}
	if (bad) {
		fail(C_RECORDS, "tracee %d: record {%u, pid %u, from %#llx, to %#llx, clock %llu}",
		     t->tid, b->qualifier, b->pid,
		     (unsigned long long)b->from, (unsigned long long)b->to,
		     (unsigned long long)b->clock);
		return;
	}
	pass(C_RECORDS);
	if (unprivileged)
		__atomic_fetch_add(&sh->unpriv_records, 1, __ATOMIC_RELAXED);
}

/* STATUS into a good buffer; Return: 0 or -errno. */
static int status_of(pid_t tid, struct ptrace_bts_config *out)
{
	memset(out, 0xa5, sizeof(*out));
	if (bts(PTRACE_BTS_STATUS, tid, (unsigned long)out, CFG))
		return -errno;
	return 0;
}

static bool same_cfg(const struct ptrace_bts_config *a,
		     const struct ptrace_bts_config *b)
{
	return a->size == b->size && a->flags == b->flags &&
	       a->signal == b->signal && a->bts_size == b->bts_size;
}

static void check_model(struct tracee *t, enum check c, const char *when)
{
	struct ptrace_bts_config s;
	int err = status_of(t->tid, &s);

	if (err) {
		if (err != -ESRCH)
			fail(C_ERRNO, "STATUS of %d %s: %s", t->tid, when,
			     strerror(-err));
		return;
	}
	if (same_cfg(&s, &t->m)) {
		pass(c);
		return;
	}
	fail(c, "tracee %d %s: STATUS {%u, %#x, %u, %u}, expected {%u, %#x, %u, %u}",
	     t->tid, when, s.size, s.flags, s.signal, s.bts_size,
	     t->m.size, t->m.flags, t->m.signal, t->m.bts_size);
	t->m = s;
}

/* Checks owed to a stopped tracee before any other request. */
static void first_checks(struct tracee *t)
{
	long n;

	if (t->fresh) {
		t->fresh = false;
		n = bts(PTRACE_BTS_SIZE, t->tid, 0, 0);
		if (n > 0)
			fail(C_CHILD_EMPTY, "new task %d has %ld records", t->tid, n);
		check_model(t, C_CHILD_EMPTY, "as a new child or thread");
		t->known = 0;
	}
	if (t->exec_check) {
		t->exec_check = false;
		check_model(t, C_EXEC_KEEPS, "after exec");
	}
}

static unsigned int pick_signal(void)
{
	static const int sigs[] = { SIGUSR1, SIGUSR2 };

	if (chance(70))
		return sigs[below(2)];
	return SIGRTMIN + 4 + below(SIGRTMAX - SIGRTMIN - 4);
}

static unsigned int pick_size(void)
{
	unsigned int r = below(100);

	if (r < 5)
		return 0;
	if (r < 60)
		return REC * (1 + below(64));
	if (r < 90)
		return REC * (64 + below(4096));
	if (r < 98)
		return REC * (4096 + below(32768));
	return REC * (32768 + below(PTRACE_BTS_SIZE_MAX / REC - 32768 + 1));
}

static bool holds_perf_bts(void)
{
	int i;

	for (i = 0; i < MAX_PERF; i++)
		if (perf_fds[i] > 0 && perf_is_bts[i])
			return true;
	return false;
}

/*
 * perf's BTS users and O_TRACE tracers exclude each other, and whichever side
 * holds BTS first tends to keep it for the whole run: the workers' perf slots
 * are rarely all free of BTS events at once, nor their tracees all without
 * O_TRACE.  They take turns by the clock: in every other period of
 * PERF_BTS_TURN_MS the workers open no perf BTS event and close theirs.
 */
#define PERF_BTS_TURN_MS	5000

static bool perf_bts_turn(void)
{
	return (now_ms() / PERF_BTS_TURN_MS) % 2 == 0;
}

static void close_perf_bts(void)
{
	int i;

	for (i = 0; i < MAX_PERF; i++) {
		if (perf_fds[i] > 0 && perf_is_bts[i]) {
			close(perf_fds[i]);
			perf_fds[i] = 0;
		}
	}
}

static bool traces_branches(void)
{
	int i;

	for (i = 0; i < MAX_TRACEES; i++)
		if (tr[i].state == T_STOP && !tr[i].exit_stop &&
		    (tr[i].m.flags & PTRACE_BTS_O_TRACE))
			return true;
	return false;
}

/* Not a signal O_SIGNAL can send; 1 stands for one above 64. */
static const unsigned int bad_signal[] = { 0, SIGKILL, SIGSTOP, 1 };

/* A random PTRACE_BTS_CONFIG, valid or not, with every check on it. */
static void op_config(struct tracee *t, bool valid)
{
	struct ptrace_bts_config c = { 0 };
	unsigned int data = CFG, newsize;
	bool alloc, tail_bad = false;
	uint64_t want = 0, may = 0;
	enum buf_kind k = B_GOOD;
	char *p, detail[96];
	long r;
	int err;

	c.flags = below(16);
	c.size = pick_size();
	if (!(c.flags & PTRACE_BTS_O_ALLOC) && chance(70))
		c.size = chance(50) ? 0 : t->m.size;
	c.signal = (c.flags & PTRACE_BTS_O_SIGNAL) ? pick_signal() : 0;
	c.bts_size = chance(50) ? REC : 0;
	if (c.flags & PTRACE_BTS_O_ALLOC && c.size == 0) {
		c.flags = PTRACE_BTS_O_ALLOC;
		c.signal = 0;
	}
	if (chance(10))
		data = CFG + 1 + below(chance(50) ? 64 : 2 * 4096);
	if (!valid) {
		switch (below(9)) {
		case 0:
			data = below(CFG);
			break;
		case 1:
			/* Beyond @lost, which CONFIG wants 0 (EINVAL). */
			data = CFG1 + 1 + below(4096 + 64);
			tail_bad = true;
			break;
		case 2:
			/* Not a flag: O_LOSSLESS (0x10) is the last one. */
			c.flags |= 1U << (5 + below(27));
			break;
		case 3:
			c.flags |= PTRACE_BTS_O_ALLOC;
			c.size = REC * (1 + below(64)) + 1 + below(REC - 1);
			break;
		case 4:
			c.flags |= PTRACE_BTS_O_ALLOC;
			c.size = PTRACE_BTS_SIZE_MAX + REC * (1 + below(8));
			break;
		case 5:
			c.flags |= PTRACE_BTS_O_SIGNAL;
			c.signal = bad_signal[below(ARRAY_SIZE(bad_signal))];
			if (c.signal == 1)
				c.signal = 65 + below(1000);
			break;
		case 6:
			c.flags &= ~PTRACE_BTS_O_SIGNAL;
			c.signal = 1 + below(31);
			break;
		case 7:
			c.bts_size = 1 + below(64);
			if (c.bts_size == REC)
				c.bts_size++;
			break;
		case 8:
			k = pick_buf(100);
			break;
		}
	}
	if (k == B_RDONLY)
		k = B_NONE;	/* it would read zeros, not this config */
	/* What the documentation says of it. */
	alloc = c.flags & PTRACE_BTS_O_ALLOC;
	newsize = alloc ? c.size : t->m.size;
	if (data < CFG)
		want |= E(EINVAL);
	if (tail_bad || data > PAGE)
		want |= E(E2BIG);
	if (!buf_usable(k, false, data)) {
		want |= E(EFAULT);
		/*
		 * The readable part of the tail is leftovers: maybe not 0,
		 * and @lost among them, which CONFIG wants 0.
		 */
		if (data > CFG)
			may |= E(E2BIG) | E(EINVAL);
	}
	if (c.flags & ~PTRACE_BTS_O_ALL)
		want |= E(EINVAL);
	if (alloc && (c.size % REC || c.size > PTRACE_BTS_SIZE_MAX ||
		      (!c.size && (c.flags & ~PTRACE_BTS_O_ALLOC))))
		want |= E(EINVAL);
	if (!alloc && c.size && c.size != t->m.size)
		want |= E(EINVAL);
	if (c.flags & PTRACE_BTS_O_SIGNAL) {
		if (!c.signal || c.signal == SIGKILL || c.signal == SIGSTOP ||
		    c.signal > 64)
			want |= E(EINVAL);
	} else if (c.signal) {
		want |= E(EINVAL);
	}
	if (c.bts_size && c.bts_size != REC)
		want |= E(EINVAL);
	if ((c.flags & RECORDING) && !newsize)
		want |= E(EINVAL);
	if ((c.flags & PTRACE_BTS_O_TRACE) && !has_bts)
		want |= E(EOPNOTSUPP);
	if (c.flags & PTRACE_BTS_O_TRACE)
		may |= E(EBUSY);
	if (alloc && c.size)
		may |= E(ENOMEM) | E(EPERM);
	if (t->exit_stop && (c.flags & RECORDING))
		may |= E(ESRCH);

	p = get_buf(k, data, false);
	if (buf_good(k) && data) {
		memset(p, 0, data);
		memcpy(p, &c, data < CFG ? data : CFG);
		if (tail_bad)
			p[CFG1 + below(data - CFG1)] = 1 + below(255);
	}
	snprintf(detail, sizeof(detail), "size %u flags %#x signal %u bts_size %u data %u buf %d",
		 c.size, c.flags, c.signal, c.bts_size, data, k);
	cur_what = "CONFIG";
	r = bts(PTRACE_BTS_CONFIG, t->tid, (unsigned long)p, data);
	err = errno;
	if (data > CFG && !want) {
		if (r < 0 && err == EINVAL)
			fail(C_CONFIG_TAIL, "CONFIG of %u bytes, zero tail: EINVAL (%s)",
			     data, detail);
		else
			pass(C_CONFIG_TAIL);
	}
	if (tail_bad && want == E(E2BIG)) {
		if (r < 0 && (err == E2BIG ||
			      (err == ESRCH && stop_changes(t->tid))))
			pass(C_CONFIG_TAIL);
		else
			fail(C_CONFIG_TAIL, "CONFIG of %u bytes, non-zero tail: %s",
			     data, r < 0 ? strerror(err) : "success");
	}
	expect(PTRACE_BTS_CONFIG, t->tid, r, err, want, may, detail);
	if (r >= 0 && (c.flags & PTRACE_BTS_O_TRACE)) {
		__atomic_fetch_add(&sh->trace_configs, 1, __ATOMIC_RELAXED);
		if (holds_perf_bts())
			fail(C_EXCLUSION, "O_TRACE configured beside our perf BTS event");
		else
			pass(C_EXCLUSION);
	}
	if (r >= 0) {
		t->m.size = newsize;
		t->m.flags = c.flags & ~PTRACE_BTS_O_ALLOC;
		t->m.signal = c.signal;
		t->m.bts_size = REC;
		if (alloc)
			t->known = 0;
		check_model(t, C_STATUS_KEPT, "after a successful CONFIG");
		return;
	}
	/* Whatever the error, the previous recording goes on as it was. */
	snprintf(detail, sizeof(detail), "after CONFIG failed with %s", strerror(err));
	check_model(t, C_STATUS_KEPT, detail);
}

static void op_status(struct tracee *t)
{
	struct ptrace_bts_config *got;
	char detail[48];
	unsigned int data = CFG;
	enum buf_kind k = pick_buf(15);
	uint64_t want = 0;
	char *p;
	long r;
	int err;
	unsigned int i;

	if (chance(30))
		data = CFG + 1 + below(chance(50) ? 64 : 3 * 4096 - CFG - 8);
	else if (chance(5))
		data = below(CFG);
	if (data < CFG)
		want |= E(EINVAL);
	if (data > PAGE)
		want |= E(E2BIG);
	if (!buf_usable(k, true, data))
		want |= E(EFAULT);
	p = get_buf(k, data, false);
	if (buf_good(k))
		memset(p, 0xa5, data);
	cur_what = "STATUS";
	r = bts(PTRACE_BTS_STATUS, t->tid, (unsigned long)p, data);
	err = errno;
	snprintf(detail, sizeof(detail), "data %u, buffer kind %d", data, k);
	expect(PTRACE_BTS_STATUS, t->tid, r, err, want, 0, detail);
	if (r < 0 || !buf_good(k))
		return;
	got = (struct ptrace_bts_config *)p;
	if (!same_cfg(got, &t->m))
		fail(C_STATUS_KEPT, "tracee %d: STATUS of %u bytes {%u, %#x, %u, %u}",
		     t->tid, data, got->size, got->flags, got->signal,
		     got->bts_size);
	/* @lost is the kernel's count: what follows it must be 0. */
	for (i = CFG1; i < data; i++) {
		if (p[i]) {
			fail(C_STATUS_TAIL, "STATUS of %u bytes left byte %u as %#x",
			     data, i, (unsigned char)p[i]);
			return;
		}
	}
	if (data > CFG1)
		pass(C_STATUS_TAIL);
}

/*
 * Whether @tid has left the stop the model knows of: a report is waiting.
 * A tracee in a ptrace stop still runs when its thread group exits (a
 * SIGKILL, another thread's exit_group() or exec): to its exit stop.
 */
static bool stop_changed(pid_t tid)
{
	siginfo_t si = { 0 };

	return !waitid(P_PID, tid, &si,
		       WEXITED | WSTOPPED | WNOHANG | WNOWAIT | __WALL) &&
	       si.si_pid == tid;
}

/*
 * @t, stopped, holds @n records where the model knows of t->known and of
 * no recording since: say all there is to know of its stop.
 */
static void lost_records(struct tracee *t, long n)
{
	struct ptrace_bts_config s = { 0 };
	siginfo_t si = { 0 };
	int gsi, gst;

	gsi = bts(PTRACE_GETSIGINFO, t->tid, 0, (unsigned long)&si) ? errno : 0;
	gst = status_of(t->tid, &s) ? errno : 0;
	printf("# tracee %d: model {%u, %#x}%s%s, state %c, siginfo %d/%#x (%d)\n",
	       t->tid, t->m.size, t->m.flags, t->exit_stop ? " at exit" : "",
	       t->fresh ? " fresh" : "", proc_state(t->tid), si.si_signo,
	       si.si_code, gsi);
	printf("# tracee %d: STATUS {%u, %#x, %u} (%d), started %llu, then %llu\n",
	       t->tid, s.size, s.flags, s.signal, gst, proc_start(t->tid),
	       t->start);
	fail(C_COUNTS, "tracee %d: SIZE %ld, expected %ld (not recording since)",
	     t->tid, n, t->known);
}

static long size_of(struct tracee *t)
{
	long n = bts(PTRACE_BTS_SIZE, t->tid, 0, 0);

	trace("SIZE %d: %ld (%s), known %ld", t->tid, n,
	      n < 0 ? strerror(errno) : "ok", (long)t->known);
	if (n < 0) {
		expect(PTRACE_BTS_SIZE, t->tid, n, errno, 0, E(ESRCH), "SIZE");
		return -1;
	}
	if (t->m.size && n > t->m.size / REC)
		fail(C_COUNTS, "tracee %d: SIZE %ld above the capacity %u",
		     t->tid, n, t->m.size / REC);
	else if (!t->m.size && n)
		fail(C_COUNTS, "tracee %d: SIZE %ld without a buffer", t->tid, n);
	else if (t->known >= 0 && n != t->known && stop_changed(t->tid))
		t->known = -1;
	else if (t->known >= 0 && n != t->known)
		lost_records(t, n);
	else
		pass(C_COUNTS);
	t->known = n;
	return n;
}

static void op_size_clear(struct tracee *t)
{
	long req = chance(50) ? PTRACE_BTS_SIZE : PTRACE_BTS_CLEAR;
	unsigned long addr = 0, data = 0;
	uint64_t want = 0;
	long r;

	if (chance(20)) {
		if (chance(50))
			addr = 1 + below(1000);
		else
			data = 1 + below(1000);
		want = E(EINVAL);
	}
	cur_what = req_name(req);
	if (req == PTRACE_BTS_SIZE && !want) {
		size_of(t);
		return;
	}
	r = bts(req, t->tid, addr, data);
	if (!expect(req, t->tid, r, errno, want, 0, "addr/data") || r < 0)
		return;
	if (req == PTRACE_BTS_CLEAR) {
		t->known = 0;
		size_of(t);
	}
}

static void op_get(struct tracee *t)
{
	struct bts_struct *b;
	enum buf_kind k = pick_buf(15);
	unsigned long idx;
	uint64_t want = 0;
	long n, r;

	cur_what = "GET";
	n = size_of(t);
	if (n < 0)
		return;
	idx = n && chance(85) ? below(n) : n + below(3);
	if (chance(3))
		idx = ~0UL - below(4);
	if (idx >= (unsigned long)n)
		want |= E(EINVAL);
	if (!buf_usable(k, true, REC))
		want |= E(EFAULT);
	b = (struct bts_struct *)get_buf(k, REC, false);
	cur_what = "GET";
	r = bts(PTRACE_BTS_GET, t->tid, (unsigned long)b, idx);
	expect(PTRACE_BTS_GET, t->tid, r, errno, want, 0, "index/buffer");
	if (r >= 0 && buf_good(k))
		check_record(t, b);
}

/* SIGKILL @tid after a random delay, from another process. */
static pid_t killer(pid_t tid)
{
	unsigned int delay = below(3000);
	pid_t pid = fork();

	if (!pid) {
		close_perf();
		usleep(delay);
		kill(tid, SIGKILL);
		_exit(0);
	}
	return pid;
}

/*
 * After a SIGKILL to @t: it runs to its death, but at its exit stop it stays
 * there when its group is exiting, as it is when @t is the last thread (the
 * kernel drops the SIGKILL in prepare_signal()), until it is continued.  A
 * continue of one that the SIGKILL did wake fails, and resume() knows.
 */
static void sigkilled_at_exit(struct tracee *t)
{
	if (t->state == T_STOP && t->exit_stop) {
		resume(t);
		return;
	}
	/* It runs to its exit stop, recording on the way. */
	if (t->m.flags & (PTRACE_BTS_O_TRACE | PTRACE_BTS_O_SCHED))
		t->known = -1;
	t->state = T_RUN;
}

static void op_drain(struct tracee *t, bool kill_it)
{
	struct bts_struct newest, oldest, *recs;
	enum buf_kind k = pick_buf(kill_it ? 0 : 15);
	bool have_ends = false;
	unsigned long data;
	pid_t k_pid = -1;
	uint64_t want = 0;
	long n, r, i;
	int err;

	cur_what = kill_it ? "DRAIN while SIGKILLed" : "DRAIN";
	n = size_of(t);
	if (n < 0)
		return;
	data = t->m.size;
	if (chance(20))
		data = n * REC + below(100);
	else if (n && chance(10))
		data = below(n * REC);
	if (data > ARENA - 8)
		data = ARENA - 8;
	if (n && !kill_it && chance(50) &&
	    !bts(PTRACE_BTS_GET, t->tid, (unsigned long)&newest, 0) &&
	    !bts(PTRACE_BTS_GET, t->tid, (unsigned long)&oldest, n - 1))
		have_ends = true;
	if (n && data < n * REC)
		want |= E(EIO);
	if (n && !buf_usable(k, true, n * REC))
		want |= E(EFAULT);
	/* DRAIN writes the records, not @data bytes: the edge is theirs. */
	recs = (struct bts_struct *)get_buf(k, k == B_EDGE && n ? n * REC : data,
					    true);
	if (kill_it) {
		k_pid = killer(t->tid);
		t->killed = true;
	}
	cur_what = kill_it ? "DRAIN while SIGKILLed" : "DRAIN";
	r = bts(PTRACE_BTS_DRAIN, t->tid, (unsigned long)recs, data);
	err = errno;
	if (k_pid > 0)
		waitpid(k_pid, NULL, 0);
	if (kill_it) {
		/*
		 * Killed before the DRAIN, it may have run to its exit stop
		 * and recorded switches on the way: more records, or EIO.
		 */
		expect(PTRACE_BTS_DRAIN, t->tid, r, err, want,
		       E(ESRCH) | E(EIO), "killed");
		if (r >= 0 && r < n)
			fail(C_COUNTS, "DRAIN of a killed tracee returned %ld, SIZE was %ld", r, n);
		/* Served, it emptied the buffer: SIGKILL waits for the request. */
		if (r >= 0)
			t->known = 0;
		sigkilled_at_exit(t);
		wait_stop(t);
		return;
	}
	expect(PTRACE_BTS_DRAIN, t->tid, r, err, want, 0, "data/buffer");
	if (r < 0 && err == EIO && data >= n * REC)
		fail(C_COUNTS, "DRAIN of %lu bytes for %ld records: EIO", data, n);
	if (r < 0) {
		/* EIO copies nothing, EFAULT keeps the records. */
		size_of(t);
		return;
	}
	if (r != n) {
		fail(C_COUNTS, "tracee %d: DRAIN returned %ld, SIZE said %ld",
		     t->tid, r, n);
	} else {
		pass(C_COUNTS);
	}
	if (r && buf_good(k)) {
		for (i = 0; i < r; i++)
			check_record(t, &recs[i]);
		if (have_ends && r == n &&
		    (memcmp(&newest, &recs[r - 1], REC) ||
		     memcmp(&oldest, &recs[0], REC)))
			fail(C_COUNTS, "tracee %d: GET 0, GET %ld differ from DRAIN's last, first",
			     t->tid, n - 1);
	}
	t->known = 0;
	size_of(t);
}

/* Requests that must fail whatever the tracee does. */
static void op_wrong(struct tracee *t)
{
	static const long bad_reqs[] = { 34, 35, 36, 37, 38, 39, 46, 47, 48, 63 };
	/* GET writes a record here. */
	union {
		struct ptrace_bts_config c;
		struct bts_struct b;
	} u;
	struct ptrace_bts_config *c = &u.c;
	long req, r;
	pid_t pid;

	switch (below(3)) {
	case 0:
		/* Unknown request numbers around ours: EIO. */
		req = bad_reqs[below(ARRAY_SIZE(bad_reqs))];
		cur_what = "unknown request";
		r = bts(req, t->tid, (unsigned long)c, CFG);
		if (t->state == T_STOP)
			expect(req, t->tid, r, errno, E(EIO), 0, "unknown request");
		break;
	case 1:
		/* A task that is not our tracee: ESRCH. */
		pid = chance(50) ? getpid() : (chance(50) ? 1 : 0x3ffff0 + below(8));
		req = PTRACE_BTS_CONFIG + below(6);
		cur_what = "not a tracee";
		memset(&u, 0, sizeof(u));
		r = bts(req, pid, (unsigned long)c, req == PTRACE_BTS_GET ||
			req == PTRACE_BTS_SIZE || req == PTRACE_BTS_CLEAR ? 0 : CFG);
		expect(req, pid, r, errno, E(ESRCH), 0, "not our tracee");
		break;
	case 2:
		/* Our tracee, running: not stopped, so ESRCH. */
		if (t->state != T_RUN)
			break;
		req = PTRACE_BTS_CONFIG + below(6);
		cur_what = "running tracee";
		memset(&u, 0, sizeof(u));
		r = bts(req, t->tid, (unsigned long)c,
			req == PTRACE_BTS_CONFIG || req == PTRACE_BTS_STATUS ? CFG : 0);
		/* It may have stopped on its own meanwhile. */
		if (r < 0) {
			expect(req, t->tid, r, errno, E(ESRCH), documented(req), "running");
			break;
		}
		/*
		 * Then the request was served, in a stop the model has not
		 * seen yet: an empty CONFIG turned recording off (a buffer
		 * stays), CLEAR emptied the buffer.
		 */
		trace("%s %d, which stopped on its own: %ld", req_name(req),
		      t->tid, r);
		if (req == PTRACE_BTS_CONFIG && t->m.size) {
			t->m.flags = 0;
			t->m.signal = 0;
		}
		t->known = req == PTRACE_BTS_CLEAR ? 0 : -1;
		break;
	}
}

/*
 * perf's users of the Debug Store beside us.
 */
static int perf_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
	return syscall(SYS_perf_event_open, a, pid, cpu, -1, 0);
}

static int intel_bts_type(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/intel_bts/type", "r");
	int type = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &type) != 1)
		type = -1;
	fclose(f);
	return type;
}

static void op_perf(struct tracee *t)
{
	struct perf_event_attr a = { .size = sizeof(a) };
	int slot, fd, type, cpu = -1;
	pid_t pid = t ? t->tid : 0;
	bool is_bts = chance(70) && perf_bts_turn();

	for (slot = 0; slot < MAX_PERF; slot++)
		if (perf_fds[slot] <= 0)
			break;
	if (slot == MAX_PERF || chance(30)) {
		slot = below(MAX_PERF);
		if (perf_fds[slot] > 0)
			close(perf_fds[slot]);
		perf_fds[slot] = 0;
		return;
	}
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	if (is_bts) {
		type = intel_bts_type();
		if (type >= 0 && chance(40)) {
			a.type = type;
		} else {
			a.type = PERF_TYPE_HARDWARE;
			a.config = PERF_COUNT_HW_BRANCH_INSTRUCTIONS;
			a.sample_period = 1;
			a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_ADDR;
		}
	} else {
		a.type = PERF_TYPE_HARDWARE;
		a.config = chance(50) ? PERF_COUNT_HW_CPU_CYCLES :
					PERF_COUNT_HW_INSTRUCTIONS;
		a.sample_period = 10007;
		a.precise_ip = 1 + below(3);
	}
	if (!unprivileged && chance(20)) {
		pid = -1;
		cpu = below(2);
	}
	cur_what = is_bts ? "perf BTS open" : "perf precise open";
	fd = perf_open(&a, pid, cpu);
	if (fd < 0)
		return;
	if (is_bts && traces_branches())
		fail(C_EXCLUSION, "a perf BTS event opened beside our O_TRACE tracee");
	else if (is_bts)
		pass(C_EXCLUSION);
	perf_fds[slot] = fd;
	perf_is_bts[slot] = is_bts;
}

/*
 * A tracer that dies while its tracee is configured (and maybe while it
 * drains).  The tracee is reparented to this worker, a subreaper.
 */
/* Whether our child @tid ends within @ms milliseconds; its status then. */
static bool reaped_within(pid_t tid, int *status, int ms)
{
	while (ms-- > 0) {
		if (waitpid(tid, status, __WALL | WNOHANG) == tid)
			return true;
		usleep(1000);
	}
	return false;
}

/* The tracee @tid of a dead tracer (configured as @c) ended with @status. */
static void orphan_death(pid_t tid, int status,
			 const struct ptrace_bts_config *c)
{
	if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL)
		fail(C_TRACER_DEATH, "tracee %d (%#x, %u) died of %d, its tracer dead",
		     tid, c->flags, c->signal, WTERMSIG(status));
	else
		pass(C_TRACER_DEATH);
}

static void op_tracer_death(void)
{
	struct ptrace_bts_config c = { 0 }, s;
	bool drain = chance(40), resumed;
	const char *step;
	long r;
	uint64_t seed = rnd();
	unsigned int delay = below(20000);
	int p[2], status, err;
	pid_t sub, tid = 0;
	char line[256];
	FILE *f;

	c.size = drain ? REC * (1024 + below(32768)) : REC * (2 + below(16));
	c.flags = PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED;
	if (!drain || chance(50)) {
		c.flags |= PTRACE_BTS_O_SIGNAL;
		c.signal = pick_signal();
	}
	if (has_bts && chance(50))
		c.flags |= PTRACE_BTS_O_TRACE;
	resumed = chance(80);
	if (pipe(p))
		return;
	cur_what = drain ? "tracer death during DRAIN" : "tracer death";
	sub = fork();
	if (sub < 0)
		return;
	if (!sub) {
		siginfo_t si;
		int go[2];
		pid_t t2;
		char ch;

		close(p[0]);
		close_perf();
		if (pipe(go))
			_exit(1);
		t2 = fork();
		if (!t2) {
			close(go[1]);
			if (read(go[0], &ch, 1) != 1)
				_exit(0);
			tracee_main(seed);
		}
		/*
		 * Never reap it: one that exits before it stops (an exec
		 * that failed, its exit()) is the worker's to see dead,
		 * and its id must name no other task meanwhile.
		 */
		if (bts(PTRACE_SEIZE, t2, 0, 0) || write(go[1], "g", 1) != 1 ||
		    bts(PTRACE_INTERRUPT, t2, 0, 0) ||
		    waitid(P_PID, t2, &si, WSTOPPED | WEXITED | WNOWAIT | __WALL))
			_exit(2);
		if (si.si_code == CLD_TRAPPED &&
		    bts(PTRACE_BTS_CONFIG, t2, (unsigned long)&c, CFG) &&
		    (!(c.flags & PTRACE_BTS_O_TRACE) || errno != EBUSY)) {
			printf("# tracer death: CONFIG %#x: %s\n", c.flags,
			       strerror(errno));
		}
		if (resumed)
			bts(PTRACE_CONT, t2, 0, 0);
		if (write(p[1], &t2, sizeof(t2)) != sizeof(t2))
			_exit(3);
		if (drain) {
			usleep(20000);
			bts(PTRACE_INTERRUPT, t2, 0, 0);
			/*
			 * Never reap it: once gone, its pid could name another
			 * task, and the worker must see how it died.
			 */
			waitid(P_PID, t2, &si,
			       WEXITED | WSTOPPED | WNOWAIT | __WALL);
			for (;;)
				bts(PTRACE_BTS_DRAIN, t2, (unsigned long)arena,
				    c.size);
		}
		for (;;)
			pause();
	}
	close(p[1]);
	if (read(p[0], &tid, sizeof(tid)) != sizeof(tid)) {
		close(p[0]);
		kill(sub, SIGKILL);
		waitpid(sub, NULL, 0);
		fail(C_WORKERS, "the tracer of the tracer-death case failed");
		return;
	}
	close(p[0]);
	usleep(drain ? 20000 + delay : delay);
	kill(sub, SIGKILL);
	waitpid(sub, &status, 0);
	kill(tid, SIGCONT);
	/* Let it run on its own long enough to fill a small buffer often. */
	usleep(50000 + below(100000));
	snprintf(line, sizeof(line), "/proc/%d/status", tid);
	f = fopen(line, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "TracerPid:", 10)) {
			if (atoi(line + 10))
				fail(C_TRACER_DEATH, "tracee %d: TracerPid %d, its tracer died",
				     tid, atoi(line + 10));
			break;
		}
	}
	if (f)
		fclose(f);
	if (waitpid(tid, &status, __WALL | WNOHANG) == tid) {
		orphan_death(tid, status, &c);
		return;
	}
	/* A new tracer starts from nothing. */
	step = "PTRACE_SEIZE";
	r = bts(PTRACE_SEIZE, tid, 0, 0);
	if (!r) {
		step = "PTRACE_INTERRUPT";
		r = bts(PTRACE_INTERRUPT, tid, 0, 0);
	}
	if (r) {
		err = errno;
		trace("%d: %s: %s, state %c", tid, step, strerror(err),
		      proc_state(tid));
		/*
		 * It may have exited on its own since the check above:
		 * EPERM for a zombie, ESRCH once gone.  Then only how it
		 * died matters.
		 */
		if (reaped_within(tid, &status, 1000)) {
			orphan_death(tid, status, &c);
			return;
		}
		fail(C_TRACER_DEATH, "tracee %d cannot be attached again: %s: %s (state %c)",
		     tid, step, strerror(err), proc_state(tid));
	} else if (waitpid(tid, &status, __WALL) == tid && WIFSTOPPED(status)) {
		if (status_of(tid, &s))
			fail(C_TRACER_DEATH, "STATUS by a new tracer: %s", strerror(errno));
		else if (s.size || s.flags || s.signal)
			fail(C_TRACER_DEATH, "a new tracer of %d sees the old config {%u, %#x, %u}",
			     tid, s.size, s.flags, s.signal);
		else if (bts(PTRACE_BTS_SIZE, tid, 0, 0))
			fail(C_TRACER_DEATH, "a new tracer of %d sees records", tid);
		else
			pass(C_TRACER_DEATH);
	} else if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL) {
		fail(C_TRACER_DEATH, "tracee %d was killed by signal %d after its tracer died",
		     tid, WTERMSIG(status));
		return;
	}
	kill(tid, SIGKILL);
	while (waitpid(tid, &status, __WALL) == tid && !WIFEXITED(status) &&
	       !WIFSIGNALED(status))
		;
}

static void op_kill(struct tracee *t)
{
	cur_what = "SIGKILL";
	t->killed = true;
	kill(t->tid, SIGKILL);
	sigkilled_at_exit(t);
	wait_stop(t);
	if (t->state == T_STOP) {
		/* PTRACE_EVENT_EXIT: let it go. */
		resume(t);
		wait_stop(t);
	}
}

static void op_detach(struct tracee *t)
{
	char who[80];
	int status, i;
	pid_t pid;

	cur_what = "DETACH";
	snprintf(who, sizeof(who), "tracee detached with flags %#x, signal %u,",
		 t->m.flags, t->m.signal);
	if (bts(PTRACE_DETACH, t->tid, 0, t->inject)) {
		expect(PTRACE_DETACH, t->tid, -1, errno, 0, E(ESRCH), "detach");
		return;
	}
	t->state = T_FREE;
	if (!t->direct) {
		kill(t->tid, SIGKILL);
		return;
	}
	/* Free now: it must not get an overflow signal of ours. */
	usleep(below(30000));
	if (waitpid(t->tid, &status, WNOHANG) == t->tid) {
		check_death(t->tid, status, who);
		return;
	}
	kill(t->tid, SIGKILL);
	/*
	 * Its other threads may be ours, to be reaped first.  One at its
	 * exit stop, reported already, holds up the group's death (a new
	 * SIGKILL does not wake it) until it is continued.
	 */
	for (;;) {
		for (i = 0; i < MAX_TRACEES; i++)
			if (tr[i].state == T_STOP && tr[i].exit_stop)
				resume(&tr[i]);
		pid = waitpid(-1, &status, __WALL | WNOHANG);
		if (pid < 0)
			return;
		if (!pid) {
			usleep(1000);
			continue;
		}
		if (pid == t->tid) {
			check_death(pid, status, who);
			return;
		}
		handle(pid, status);
		if (WIFSTOPPED(status))
			resume(find(pid));
	}
}

static struct tracee *pick(void)
{
	int i, n = live(), k;

	if (!n)
		return NULL;
	k = below(n);
	for (i = 0; i < MAX_TRACEES; i++)
		if (tr[i].state != T_FREE && !k--)
			return &tr[i];
	return NULL;
}

/*
 * For a hang: what the model thinks of each tracee beside what the kernel
 * says (/proc/TID/stat and wchan).  Only calls a signal handler may make.
 */
static void hang_report(void)
{
	char msg[400], path[64];
	int i, fd, len, n;

	for (i = 0; i < MAX_TRACEES; i++) {
		if (tr[i].state == T_FREE)
			continue;
		len = snprintf(msg, sizeof(msg), "#   tracee %d: model %s%s, kernel ",
			       tr[i].tid, tr[i].state == T_STOP ? "stopped" : "running",
			       tr[i].exit_stop ? " at exit" : "");
		snprintf(path, sizeof(path), "/proc/%d/stat", tr[i].tid);
		fd = open(path, O_RDONLY);
		n = fd < 0 ? 0 : read(fd, msg + len, sizeof(msg) - len - 64);
		if (fd >= 0)
			close(fd);
		len += n > 0 ? n - 1 : 0;
		len += snprintf(msg + len, 16, " wchan ");
		snprintf(path, sizeof(path), "/proc/%d/wchan", tr[i].tid);
		fd = open(path, O_RDONLY);
		n = fd < 0 ? 0 : read(fd, msg + len, 40);
		if (fd >= 0)
			close(fd);
		len += n > 0 ? n : 0;
		msg[len++] = '\n';
		if (write(1, msg, len) < 0)
			return;
	}
}

static void sigalrm(int sig)
{
	char msg[160];
	int len;

	len = snprintf(msg, sizeof(msg),
		       "# HANG: worker %d stuck in op %ld (%s); replay with -s %llu\n",
		       cur_worker, cur_op, cur_what, (unsigned long long)opt_seed);
	if (write(1, msg, len) < 0)
		_exit(3);
	hang_report();
	history_shown = false;
	show_history();
	_exit(3);
}

static void one_op(void)
{
	struct tracee *t;
	unsigned int r = below(1000);

	if (live() < 2 || (live() < MAX_LIVE && r < 15)) {
		cur_what = "spawn";
		spawn();
		return;
	}
	if (!perf_bts_turn())
		close_perf_bts();
	t = pick();
	if (!t)
		return;
	trace("op %u on %d (%s%s), flags %#x size %u", r, t->tid,
	      t->state == T_STOP ? "stopped" : "running",
	      t->exit_stop ? " at exit" : "", t->m.flags, t->m.size);
	if (r < 30) {
		op_wrong(t);
		return;
	}
	if (r < 50) {
		op_perf(chance(80) && t->state == T_STOP ? t : NULL);
		return;
	}
	if (r < 58) {
		op_tracer_death();
		return;
	}
	if (r < 66) {
		if (t->state == T_STOP && chance(40))
			op_drain(t, true);
		else
			op_kill(t);
		return;
	}
	if (r < 74) {
		if (t->state == T_RUN)
			stop(t);
		if (t->state == T_STOP)
			op_detach(t);
		return;
	}
	if (t->state == T_RUN) {
		cur_what = "stop";
		if (!stop(t))
			return;
	}
	first_checks(t);
	if (t->state != T_STOP)
		return;
	r = below(100);
	if (r < 25)
		resume(t);
	else if (r < 45)
		op_config(t, true);
	else if (r < 60)
		op_config(t, false);
	else if (r < 70)
		op_status(t);
	else if (r < 78)
		op_size_clear(t);
	else if (r < 86)
		op_get(t);
	else
		op_drain(t, false);
}

static __noreturn void worker(int w, long ops, uint64_t deadline)
{
	int i;

	cur_worker = w;
	rng = splitmix(opt_seed + 1 + w) | 1;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	signal(SIGALRM, sigalrm);
	if (is_root && (w & 1)) {
		if (setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY)) {
			fail(C_WORKERS, "setresuid(nobody): %s", strerror(errno));
			_exit(1);
		}
		prctl(PR_SET_DUMPABLE, 1);
	}
	unprivileged = geteuid() != 0;
	for (cur_op = 0; cur_op < ops && now_ms() < deadline; cur_op++) {
		alarm(60);
		reap(false);
		one_op();
		sh->ops[w] = cur_op + 1;
	}
	cur_what = "cleanup";
	alarm(60);
	for (i = 0; i < MAX_PERF; i++)
		if (perf_fds[i] > 0)
			close(perf_fds[i]);
	for (i = 0; i < MAX_TRACEES; i++)
		if (tr[i].state != T_FREE)
			kill(tr[i].tid, SIGKILL);
	reap(true);
	_exit(0);
}

/* cpu 1 offline and online, until told to stop; leaves it online. */
static int hotplug_stop;

static void on_term(int sig)
{
	__atomic_store_n(&hotplug_stop, 1, __ATOMIC_RELAXED);
}

static __noreturn void hotplugger(void)
{
	const char *path = "/sys/devices/system/cpu/cpu1/online";
	int err;

	rng = splitmix(opt_seed) | 1;
	cur_worker = -2;
	signal(SIGTERM, on_term);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	while (!__atomic_load_n(&hotplug_stop, __ATOMIC_RELAXED)) {
		/* Uniform over [pause / 6, pause * 11 / 6): the mean is -p. */
		usleep(opt_pause_ms * 1000 / 6 + below(opt_pause_ms * 5000 / 3));
		if (__atomic_load_n(&hotplug_stop, __ATOMIC_RELAXED))
			break;
		err = write_file(path, "0");
		if (err && err != -EBUSY && err != -EAGAIN)
			fail(C_HOTPLUG, "cpu1 offline: %s", strerror(-err));
		usleep(10000 + below(100000));
		err = write_file(path, "1");
		if (err)
			fail(C_HOTPLUG, "cpu1 online: %s", strerror(-err));
		else
			pass(C_HOTPLUG);
	}
	if (write_file(path, "1"))
		fail(C_HOTPLUG, "cpu1 online at the end: %s", strerror(errno));
	_exit(0);
}

/*
 * Fault injection: failslab and fail_page_alloc for this thread only.
 */
#define FI_DIR	"/sys/kernel/debug/"

static int fi_set(const char *attr, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), FI_DIR "%s", attr);
	return write_file(path, val);
}

/* Opened once: with make-it-fail on, opening a file could fail. */
static int fi_fd = -1;

static int fi_arm(bool on)
{
	char path[64];

	if (fi_fd < 0) {
		snprintf(path, sizeof(path), "/proc/self/task/%ld/make-it-fail",
			 (long)syscall(SYS_gettid));
		fi_fd = open(path, O_WRONLY);
		if (fi_fd < 0)
			return -errno;
	}
	return pwrite(fi_fd, on ? "1" : "0", 1, 0) == 1 ? 0 : -errno;
}

static const char *fi_setup(void)
{
	static const char * const both[] = { "failslab", "fail_page_alloc" };
	char attr[64];
	int i, err = 0;

	if (!is_root)
		return "fault injection needs root";
	if (access(FI_DIR "failslab", F_OK) || access(FI_DIR "fail_page_alloc", F_OK))
		return "no failslab, fail_page_alloc in debugfs (CONFIG_FAULT_INJECTION_DEBUG_FS)";
	for (i = 0; i < 2; i++) {
#define SET(a, v) do {						\
	snprintf(attr, sizeof(attr), "%s/" a, both[i]);			\
	err |= fi_set(attr, v);						\
} while (0)
		SET("task-filter", "Y");
		SET("probability", "0");
		SET("interval", "1");
		SET("times", "-1");
		SET("space", "0");
		SET("verbose", "0");
		SET("ignore-gfp-wait", "N");
#undef SET
	}
	err |= fi_set("fail_page_alloc/ignore-gfp-highmem", "N");
	err |= fi_set("fail_page_alloc/min-order", "0");
	if (err)
		return "cannot set up failslab/fail_page_alloc";
	if (fi_arm(false))
		return "no /proc/self/task/TID/make-it-fail";
	return NULL;
}

static void fi_probability(unsigned int p)
{
	char v[16];

	snprintf(v, sizeof(v), "%u", p);
	fi_set("failslab/probability", v);
	fi_set("fail_page_alloc/probability", v);
}

/* DRAIN allocates nothing: every allocation failing, it still works. */
static void drain_under_faults(struct tracee *t)
{
	struct bts_struct *recs;
	long n, r;
	int err;

	cur_what = "DRAIN under fault injection";
	n = bts(PTRACE_BTS_SIZE, t->tid, 0, 0);
	if (n < 0) {
		fail(C_FAULTS, "SIZE before DRAIN: %s", strerror(errno));
		return;
	}
	/* Touched now: no page fault in DRAIN's copy needs a page. */
	recs = calloc(n + 1, REC);
	if (!recs)
		return;
	memset(recs, 0xa5, (n + 1) * REC);
	fi_probability(100);
	fi_arm(true);
	r = bts(PTRACE_BTS_DRAIN, t->tid, (unsigned long)recs, (n + 1) * REC);
	err = errno;
	fi_arm(false);
	fi_probability(0);
	free(recs);
	if (r != n)
		fail(C_FAULTS, "DRAIN of %ld records with every allocation failing: %s",
		     n, r < 0 ? strerror(err) : "another count");
	else
		pass(C_FAULTS);
	t->known = 0;
}

static int fault_phase(int trials, const char **skip)
{
	struct perf_event_attr a = { .size = sizeof(a) };
	struct ptrace_bts_config c, before, after;
	int injected = 0, fails_before = sh->fails[C_FAULTS];
	struct tracee *t;
	uint64_t deadline;
	long r;
	int err, fd;

	*skip = fi_setup();
	if (*skip)
		return 0;
	cur_worker = -3;
	rng = splitmix(opt_seed ^ 0xfa17) | 1;
	signal(SIGALRM, sigalrm);
	t = spawn();
	if (!t || t->state != T_STOP) {
		*skip = "cannot start a tracee";
		return 0;
	}
	/* Bounded like the stress itself: -t seconds at most. */
	deadline = now_ms() + opt_secs * 1000ULL;
	for (cur_op = 0; cur_op < trials && now_ms() < deadline; cur_op++) {
		alarm(60);
		/*
		 * A tracee at its exit stop may not start to record (ESRCH):
		 * go on with a new one.
		 */
		if (t->state != T_STOP || t->exit_stop) {
			trace("%d: replaced (%s)", t->tid,
			      t->exit_stop ? "at its exit stop" : "gone");
			reap(true);
			t = spawn();
			if (!t || t->state != T_STOP)
				break;
		}
		if (status_of(t->tid, &before))
			break;
		memset(&c, 0, sizeof(c));
		switch (below(6)) {
		case 0:
		case 1:
		case 2:
			c.flags = PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_SCHED;
			c.size = pick_size();
			if (!c.size)
				c.flags = PTRACE_BTS_O_ALLOC;
			if (has_bts && chance(50) && c.size)
				c.flags |= PTRACE_BTS_O_TRACE;
			if (c.size && chance(30)) {
				c.flags |= PTRACE_BTS_O_SIGNAL;
				c.signal = SIGUSR1;
			}
			break;
		case 3:
			c.flags = before.size ? (has_bts && chance(50) ?
				  PTRACE_BTS_O_TRACE : PTRACE_BTS_O_SCHED) : 0;
			break;
		case 4:
			a.type = PERF_TYPE_HARDWARE;
			a.config = PERF_COUNT_HW_BRANCH_INSTRUCTIONS;
			a.sample_period = 1;
			a.exclude_kernel = 1;
			if (chance(30)) {
				a.config = PERF_COUNT_HW_CPU_CYCLES;
				a.sample_period = 10007;
				a.precise_ip = 1;
			}
			fi_probability(1 + below(100));
			fi_arm(true);
			fd = perf_open(&a, t->tid, -1);
			err = errno;
			fi_arm(false);
			if (fd >= 0)
				close(fd);
			else if (err == ENOMEM)
				injected++;
			continue;
		case 5:
			drain_under_faults(t);
			continue;
		}
		cur_what = "CONFIG under fault injection";
		fi_probability(1 + below(100));
		fi_arm(true);
		r = bts(PTRACE_BTS_CONFIG, t->tid, (unsigned long)&c, CFG);
		err = errno;
		fi_arm(false);
		fi_probability(0);
		if (status_of(t->tid, &after)) {
			fail(C_FAULTS, "STATUS after an injected failure: %s", strerror(errno));
			break;
		}
		if (r >= 0) {
			if (after.size != ((c.flags & PTRACE_BTS_O_ALLOC) ?
					   c.size : before.size) ||
			    after.flags != (c.flags & ~PTRACE_BTS_O_ALLOC))
				fail(C_FAULTS, "CONFIG {%u, %#x} succeeded, STATUS {%u, %#x}",
				     c.size, c.flags, after.size, after.flags);
			else
				pass(C_FAULTS);
		} else if (err == ENOMEM) {
			injected++;
			if (!same_cfg(&before, &after))
				fail(C_FAULTS, "CONFIG {%u, %#x}: ENOMEM, {%u, %#x} -> {%u, %#x}",
				     c.size, c.flags, before.size, before.flags,
				     after.size, after.flags);
			else
				pass(C_FAULTS);
		} else if (err == EBUSY && (c.flags & PTRACE_BTS_O_TRACE)) {
			pass(C_FAULTS);
		} else {
			fail(C_FAULTS, "CONFIG {%u, %#x} under fault injection: %s, not ENOMEM",
			     c.size, c.flags, strerror(err));
		}
		t->m = after;
		if (chance(30)) {
			resume(t);
			usleep(below(3000));
			stop(t);
		}
	}
	fi_probability(0);
	fi_arm(false);
	if (t && t->state != T_FREE) {
		memset(&c, 0, sizeof(c));
		c.flags = PTRACE_BTS_O_ALLOC;
		if (t->state == T_STOP &&
		    bts(PTRACE_BTS_CONFIG, t->tid, (unsigned long)&c, CFG))
			fail(C_FAULTS, "freeing the buffer after the faults: %s", strerror(errno));
		kill(t->tid, SIGKILL);
		t->state = T_RUN;
		wait_stop(t);
	}
	reap(true);
	alarm(0);
	printf("# fault injection: %ld trials, %d injected allocation failures\n",
	       cur_op, injected);
	return sh->fails[C_FAULTS] - fails_before;
}

/* The addresses kmemleak reports, as one string. */
static char *kmemleak_objects(void)
{
	const char *path = "/sys/kernel/debug/kmemleak";
	size_t len = 0, cap = 4096;
	char *out = calloc(1, cap), line[512];
	FILE *f;
	int i;

	for (i = 0; i < 2; i++) {
		write_file(path, "scan");
		sleep(1);
	}
	f = fopen(path, "r");
	if (!f)
		return out;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "unreferenced object", 19))
			continue;
		if (len + strlen(line) + 1 >= cap) {
			cap = 2 * cap + strlen(line);
			out = realloc(out, cap);
		}
		memcpy(out + len, line, strlen(line) + 1);
		len += strlen(line);
	}
	fclose(f);
	return out;
}

static int new_leaks(const char *before, const char *after, char *first, size_t n)
{
	const char *p = after, *nl;
	char obj[64];
	int leaks = 0;

	while (*p) {
		nl = strchr(p, '\n');
		if (!nl)
			break;
		if (sscanf(p, "unreferenced object %63s", obj) == 1 &&
		    !strstr(before, obj)) {
			if (!leaks++)
				snprintf(first, n, "%.*s", (int)(nl - p), p);
		}
		p = nl + 1;
	}
	return leaks;
}

static void replay_hint(const char *prog, const char *what)
{
	ksft_print_msg("%s: %s -s %llu -n %ld -t %d -w %d -f %d -p %u%s\n",
		       what, prog, (unsigned long long)opt_seed, opt_ops,
		       opt_secs, opt_workers, opt_faults, opt_pause_ms,
		       opt_hotplug ? "" : " -H");
}

static void print_usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-s SEED] [-n OPS] [-t SECONDS] [-w WORKERS]\n"
		"\t[-f FAULT_TRIALS] [-H] [-p MS] [-v]\n", prog);
	exit(KSFT_FAIL);
}

/**
 * main() - run the seeded stress test and report each check
 * @argc: the number of arguments
 * @argv: the options of print_usage()
 *
 * Return: does not return; exits with %KSFT_PASS or %KSFT_FAIL.
 */
int main(int argc, char **argv)
{
	const char *fault_skip = NULL, *kml_skip = NULL;
	char *leaks_before = NULL, first_leak[200] = "";
	pid_t pids[MAX_WORKERS], hp = 0;
	int i, opt, status, nleaks = 0;
	bool seeded = false, crashed = false;
	uint64_t deadline;
	long total = 0;

	self_exe = "/proc/self/exe";
	if (argc == 3 && !strcmp(argv[1], "--tracee"))
		tracee_main(strtoull(argv[2], NULL, 0));
	while ((opt = getopt(argc, argv, "s:n:t:w:f:Hp:v")) != -1) {
		switch (opt) {
		case 's':
			opt_seed = strtoull(optarg, NULL, 0);
			seeded = true;
			break;
		case 'n':
			opt_ops = atol(optarg);
			break;
		case 't':
			opt_secs = atoi(optarg);
			break;
		case 'w':
			opt_workers = atoi(optarg);
			break;
		case 'f':
			opt_faults = atoi(optarg);
			break;
		case 'H':
			opt_hotplug = false;
			break;
		case 'p':
			opt_pause_ms = atoi(optarg);
			if (opt_pause_ms < 6 || opt_pause_ms > 60000)
				print_usage(argv[0]);
			break;
		case 'v':
			opt_verbose = true;
			break;
		default:
			print_usage(argv[0]);
		}
	}
	if (opt_workers < 1 || opt_workers > MAX_WORKERS || opt_ops < 0 ||
	    opt_secs < 1)
		print_usage(argv[0]);
	if (!seeded)
		opt_seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);

	setvbuf(stdout, NULL, _IOLBF, 0);
	ksft_print_header();
	ksft_set_plan(NR_CHECKS);
	has_bts = cpu_has_bts();
	is_root = geteuid() == 0;
	ksft_print_msg("seed %llu, %ld ops, %d s, %d workers, %s, %s\n",
		       (unsigned long long)opt_seed, opt_ops, opt_secs,
		       opt_workers, has_bts ? "BTS" : "no BTS",
		       is_root ? "root (odd workers run as nobody)" : "unprivileged");
	replay_hint(argv[0], "replay");

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	arena = mmap(NULL, ARENA + 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	small = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	rdonly = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED || arena == MAP_FAILED || small == MAP_FAILED ||
	    rdonly == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	if (mprotect(arena + ARENA, 4096, PROT_NONE) ||
	    mprotect(small + 3 * 4096, 4096, PROT_NONE))
		ksft_exit_fail_msg("mprotect: %s\n", strerror(errno));

	if (is_root && !access("/sys/kernel/debug/kmemleak", F_OK))
		leaks_before = kmemleak_objects();

	/* A hang of the whole program, not of one worker. */
	signal(SIGALRM, sigalrm);
	alarm(opt_secs + 300);
	deadline = now_ms() + opt_secs * 1000ULL;
	if (opt_hotplug && is_root &&
	    !access("/sys/devices/system/cpu/cpu1/online", W_OK)) {
		hp = fork();
		if (!hp)
			hotplugger();
	}
	for (i = 0; i < opt_workers; i++) {
		pids[i] = fork();
		if (!pids[i])
			worker(i, (opt_ops + opt_workers - 1 - i) / opt_workers,
			       deadline);
	}
	for (i = 0; i < opt_workers; i++) {
		if (waitpid(pids[i], &status, 0) != pids[i])
			continue;
		if (WIFSIGNALED(status) || WEXITSTATUS(status)) {
			crashed = true;
			fail(C_WORKERS, "worker %d %s %d after %ld ops", i,
			     WIFSIGNALED(status) ? "killed by signal" : "exited with",
			     WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
			     sh->ops[i]);
		}
		total += sh->ops[i];
	}
	if (hp > 0) {
		kill(hp, SIGTERM);
		waitpid(hp, &status, 0);
	}
	cur_worker = -1;
	if (opt_faults > 0)
		fault_phase(opt_faults, &fault_skip);
	else
		fault_skip = "fault injection off (-f 0)";
	if (!is_root)
		kml_skip = "kmemleak needs root";
	else if (!leaks_before)
		kml_skip = "no kmemleak in debugfs (CONFIG_DEBUG_KMEMLEAK: debug kernel only)";
	else
		nleaks = new_leaks(leaks_before, kmemleak_objects(),
				   first_leak, sizeof(first_leak));
	alarm(0);

	ksft_print_msg("seed %llu: %ld ops, %d workers, cpu1 down/up %d, O_TRACE %d, branches %d\n",
		       (unsigned long long)opt_seed, total, opt_workers,
		       sh->passes[C_HOTPLUG],
		       sh->trace_configs, sh->branch_records);
	for (i = 0; i < NR_CHECKS; i++) {
		const char *skip = NULL;

		switch (i) {
		case C_EXCLUSION:
		case C_BRANCHES:
			if (!has_bts)
				skip = "the cpu has no BTS (no bts and dtes64 in /proc/cpuinfo)";
			else if (i == C_BRANCHES && !opt_ops)
				skip = "no random operations ran (-n 0)";
			else if (i == C_BRANCHES && !sh->trace_configs)
				skip = "no O_TRACE configuration succeeded (BTS busy)";
			else if (i == C_BRANCHES && !sh->branch_records)
				fail(C_BRANCHES, "%d O_TRACE configurations, no branch record",
				     sh->trace_configs);
			else if (i == C_BRANCHES)
				sh->passes[i] = sh->branch_records;
			break;
		case C_UNPRIV:
			if (is_root && opt_workers < 2)
				skip = "no unprivileged worker (-w 1)";
			else if (!sh->unpriv_records)
				skip = "no record reached an unprivileged tracer";
			else if (!sh->fails[C_RECORDS])
				sh->passes[i] = sh->unpriv_records;
			else
				fail(C_UNPRIV, "see the records check");
			break;
		case C_HOTPLUG:
			if (!hp)
				skip = !opt_hotplug ? "cpu hotplug off (-H)" :
				       is_root ? "no /sys/devices/system/cpu/cpu1/online" :
						 "cpu hotplug needs root";
			break;
		case C_FAULTS:
			skip = fault_skip;
			break;
		case C_KMEMLEAK:
			skip = kml_skip;
			if (!skip && nleaks)
				fail(C_KMEMLEAK, "%d new unreferenced objects, the first: %s",
				     nleaks, first_leak);
			else if (!skip)
				pass(C_KMEMLEAK);
			break;
		case C_WORKERS:
			if (!crashed && !sh->fails[i])
				pass(C_WORKERS);
			break;
		}
		if (!skip && !sh->fails[i] && !sh->passes[i])
			skip = "the situation did not arise in this run";
		if (sh->fails[i])
			ksft_test_result_code(KSFT_FAIL, check_name[i],
					      "%d failures, the first: %s",
					      sh->fails[i], sh->first[i]);
		else if (skip)
			ksft_test_result_code(KSFT_SKIP, check_name[i], "%s", skip);
		else
			ksft_test_result_code(KSFT_PASS, check_name[i],
					      "%d checks: %s", sh->passes[i],
					      check_what[i]);
	}
	if (ksft_get_fail_cnt())
		replay_hint(argv[0], "FAILED: replay with");
	ksft_finished();
}
