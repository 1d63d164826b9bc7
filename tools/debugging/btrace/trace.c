// SPDX-License-Identifier: GPL-2.0
/*
 * The ptrace loop: run or attach to the program, follow its threads,
 * forks and execs, give each thread a BTS buffer, and take the records
 * at the stops where they are wanted.  What it learns goes into the
 * struct bt_trace, and each event is rendered from there at once.
 */
#include <dirent.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/ptrace.h>
#include <linux/seccomp.h>

#include "btrace.h"

/*
 * The SECCOMP_RET_DATA of btrace's own exec filter: a PTRACE_EVENT_SECCOMP
 * stop with other data comes from a filter of the program's own.
 */
#define BT_SECCOMP_DATA		0xb7ac

/* ia32 and x32 system calls that execute a program. */
#define BT_NR32_EXECVE		11
#define BT_NR32_EXECVEAT	358
#define BT_X32_BIT		0x40000000U
#define BT_NRX32_EXECVE		(BT_X32_BIT | 520)
#define BT_NRX32_EXECVEAT	(BT_X32_BIT | 545)

/* bt_stop(): resume a group-stopped tracee with PTRACE_LISTEN. */
#define BT_LISTEN		(-1)

/* One process: the mapset its threads' current program is symbolized with. */
struct bt_proc {
	pid_t tgid;
	u32 mapset;
	u32 ntracees;		/* entries of bt.tracees that point here */
	bool has_maps;
	bool crash_reported;	/* a thread's fatal signal was reported */
};

/* One thread btrace is attached to. */
struct bt_tracee {
	pid_t tid;
	struct bt_proc *proc;
	struct bt_thread *th;	/* NULL until it runs a program we trace */
	bool configured;	/* it has a buffer */
	bool initial_seen;	/* its first stop after attaching is past */
	bool exited;		/* past its exit stop: it stops no more */
	bool stopped;		/* in a stop, while detaching */
	int pending;		/* signal to give back when detaching */
};

static struct {
	struct bt_trace *t;
	struct bt_run *r;
	struct bt_tracee *tracees;
	size_t ntracees;
	struct bt_proc **procs;
	size_t nprocs;
	struct bts_struct *buf;	/* for DRAIN: one buffer's worth */
	pid_t main;		/* the process whose status is ours */
	int status;
	int fatal;		/* a BT_EXIT_* code that ends the run */
	bool any_configured;
	sigset_t oldmask;	/* the signal mask before bt_signals_block() */
	sigset_t waitmask;	/* the mask while bt_wait() sleeps */
} bt;

/*
 * Set by the SIGINT/SIGTERM handler.  Those signals are blocked except
 * while bt_wait() sleeps in sigsuspend(), so none is lost between the
 * check of this flag and the wait.  Read and written with __atomic
 * builtins: the handler interrupts the main flow of this thread.
 */
static sig_atomic_t bt_interrupted;

static bool bt_was_interrupted(void)
{
	return __atomic_load_n(&bt_interrupted, __ATOMIC_RELAXED);
}

static long bt_ptrace(long req, pid_t pid, unsigned long addr,
		      unsigned long data)
{
	return syscall(SYS_ptrace, req, pid, addr, data);
}

static struct bt_tracee *bt_tracee_find(pid_t tid)
{
	size_t i;

	for (i = 0; i < bt.ntracees; i++)
		if (bt.tracees[i].tid == tid)
			return &bt.tracees[i];
	return NULL;
}

/* What btrace reads of /proc/TID/status. */
struct bt_status {
	char state;			/* 'X' if the thread is gone */
	int tgid;			/* Tgid */
	int tracer;			/* TracerPid */
	unsigned long long caught;	/* SigCgt */
	unsigned long long ignored;	/* SigIgn */
};

/* Read @tid's status into @st; false if the thread is gone. */
static bool bt_read_status(pid_t tid, struct bt_status *st)
{
	char path[64], line[128];
	FILE *f;

	memset(st, 0, sizeof(*st));
	st->state = 'X';
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "State: %c", &st->state) != 1 &&
		    sscanf(line, "Tgid: %d", &st->tgid) != 1 &&
		    sscanf(line, "TracerPid: %d", &st->tracer) != 1 &&
		    sscanf(line, "SigCgt: %llx", &st->caught) != 1)
			sscanf(line, "SigIgn: %llx", &st->ignored);
	fclose(f);
	return true;
}

/* @tid's process; @tid itself if it is gone. */
static pid_t bt_tgid_of(pid_t tid)
{
	struct bt_status st;

	return bt_read_status(tid, &st) && st.tgid ? st.tgid : tid;
}

static struct bt_proc *bt_proc_get(pid_t tgid)
{
	struct bt_proc *p;
	size_t i;

	for (i = 0; i < bt.nprocs; i++)
		if (bt.procs[i]->tgid == tgid)
			return bt.procs[i];
	p = bt_alloc(sizeof(*p));
	p->tgid = tgid;
	bt.procs = bt_grow(bt.procs, (bt.nprocs + 1) * sizeof(p));
	bt.procs[bt.nprocs++] = p;
	return p;
}

/* The last thread of @p is gone: a new process of the same id is new. */
static void bt_proc_put(struct bt_proc *p)
{
	size_t i;

	if (--p->ntracees)
		return;
	for (i = 0; i < bt.nprocs; i++) {
		if (bt.procs[i] == p) {
			bt.procs[i] = bt.procs[--bt.nprocs];
			break;
		}
	}
	free(p);
}

static struct bt_tracee *bt_tracee_add(pid_t tid)
{
	struct bt_tracee *te;

	bt.tracees = bt_grow(bt.tracees, (bt.ntracees + 1) * sizeof(*te));
	te = &bt.tracees[bt.ntracees++];
	memset(te, 0, sizeof(*te));
	te->tid = tid;
	te->proc = bt_proc_get(bt_tgid_of(tid));
	te->proc->ntracees++;
	return te;
}

static void bt_tracee_del(struct bt_tracee *te)
{
	bt_proc_put(te->proc);
	*te = bt.tracees[--bt.ntracees];
}

static void bt_comm(struct bt_thread *th)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/comm", th->tid);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(th->comm, sizeof(th->comm), f))
		th->comm[strcspn(th->comm, "\n")] = '\0';
	fclose(f);
}

/*
 * Take a new snapshot of the process's mappings.  @exec starts a new
 * program; else new mappings (dlopen) make a newer mapset of the same
 * program, so that events already rendered keep theirs.
 */
static void bt_snapshot(struct bt_proc *p, bool exec)
{
	const char *old = NULL;
	char *cur, *merged;
	pid_t live = p->tgid;
	size_t i;

	/* A main thread that exited has no maps: read a live thread's. */
	for (i = 0; i < bt.ntracees; i++) {
		if (bt.tracees[i].proc == p && !bt.tracees[i].exited) {
			live = bt.tracees[i].tid;
			break;
		}
	}
	cur = bt_maps_read(live);
	if (!cur)
		return;
	if (p->has_maps && !exec)
		old = bt.t->mapsets[p->mapset].maps;
	merged = bt_maps_merge(old, cur);
	free(cur);
	if (!merged)
		return;
	p->mapset = bt_mapset_add(bt.t, p->tgid, merged,
				  bt_maps_buildids(merged));
	for (i = 0; i < bt.ntracees; i++)
		if (bt.tracees[i].proc == p && bt.tracees[i].th && !exec)
			bt_thread_epoch(bt.tracees[i].th, p->mapset, true);
	p->has_maps = true;
}

/* Give a stopped thread its buffer; the first failure ends the run. */
static void bt_configure(struct bt_tracee *te)
{
	int err;

	if (!te->proc->has_maps)
		bt_snapshot(te->proc, false);
	if (!te->th) {
		te->th = bt_thread_add(bt.t, te->tid, te->proc->tgid);
		bt_thread_epoch(te->th, te->proc->mapset, false);
	}
	bt_comm(te->th);
	err = bt_bts_config(te->tid, &bt.r->bts);
	if (!err) {
		te->configured = true;
		bt.any_configured = true;
		return;
	}
	bt_bts_explain(err, &bt.r->bts, te->tid);
	if (!bt.any_configured)
		bt.fatal = bt_bts_exit_code(err);
	else
		bt_err("thread %d is not traced", (int)te->tid);
}

/* Move the records of a stopped thread into the trace. */
static void bt_drain(struct bt_tracee *te)
{
	struct bt_bts_opts *o = &bt.r->bts;
	struct bts_struct lost_rec = { .qualifier = BTS_LOST };
	u64 lost = 0;
	long n, i;

	if (!te->configured)
		return;
	if (o->all)
		bt_bts_lost(te->tid, &lost);
	n = bt_bts_drain(te->tid, bt.buf, o->records * sizeof(*bt.buf));
	if (n < 0) {
		bt_err("PTRACE_BTS_DRAIN of %d: %s", (int)te->tid,
		       strerror(-n));
		return;
	}
	for (i = 0; i < n && lost; i++)
		if (bt.buf[i].qualifier == BTS_LOST)
			lost = 0;
	bt_thread_append(te->th, bt.buf, n);
	if (lost) {
		lost_rec.pid = te->tid;
		lost_rec.clock = lost;
		bt_thread_append(te->th, &lost_rec, 1);
	}
}

static void bt_event(struct bt_tracee *te, u32 kind,
		     const siginfo_t *si)
{
	struct bt_event *ev = bt_event_add(bt.t, kind, te->th);

	if (si) {
		ev->signo = si->si_signo;
		ev->code = si->si_code;
		ev->addr = (unsigned long)si->si_addr;
	}
	bt_view_event(bt.t, ev, &bt.r->view);
	fflush(stdout);
}

/* A program the tracee now runs: a new thread of the trace, or a new epoch. */
static void bt_exec(struct bt_tracee *te)
{
	struct bts_struct mark = { .qualifier = BT_REC_EXEC, .pid = te->tid };
	unsigned long former = te->tid;
	struct bt_tracee *old;
	u64 i, from;

	/* A thread other than the leader executed: it takes the leader's id. */
	bt_ptrace(PTRACE_GETEVENTMSG, te->tid, 0, (unsigned long)&former);
	old = bt_tracee_find(former);
	if ((pid_t)former != te->tid && old) {
		pid_t tid = te->tid;

		bt_tracee_del(te);
		te = bt_tracee_find(former);
		te->tid = tid;
		te->exited = false;
		te->initial_seen = true;
		if (te->th)
			te->th->tid = tid;
	}
	bt_snapshot(te->proc, true);
	if (!te->th) {
		bt_configure(te);
		return;
	}
	from = te->th->nrecs;
	bt_drain(te);
	for (i = from; i < te->th->nrecs; i++)
		if (te->th->recs[i].qualifier == BTS_TASK_EXEC)
			break;
	if (i == te->th->nrecs)
		bt_thread_append(te->th, &mark, 1);
	bt_thread_epoch(te->th, te->proc->mapset, false);
	bt_comm(te->th);
}

/* Whether @sig kills @tid: neither caught nor ignored. */
static bool bt_kills(pid_t tid, int sig)
{
	struct bt_status st;

	if (!bt_read_status(tid, &st))
		return false;
	return !((st.caught | st.ignored) & (1ULL << (sig - 1)));
}

static bool bt_is_crash(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE ||
	       sig == SIGILL || sig == SIGABRT || sig == SIGTRAP ||
	       sig == SIGSYS;
}

/* The overflow signal of --all (PTRACE_BTS_O_SIGNAL): btrace's own. */
static bool bt_is_overflow(const siginfo_t *si)
{
	return bt.r->bts.all && si->si_signo == bt.r->bts.signal &&
	       si->si_code == SI_KERNEL && si->si_errno == PTRACE_BTS_SI_ERRNO;
}

/* The signal of a signal-delivery-stop to give back when detaching. */
static int bt_give_back(pid_t tid, int sig)
{
	siginfo_t si;

	if (bt_ptrace(PTRACE_GETSIGINFO, tid, 0, (unsigned long)&si))
		return sig;
	return bt_is_overflow(&si) ? 0 : sig;
}

/* A signal-delivery-stop: the signal to resume the tracee with. */
static int bt_signal(struct bt_tracee *te, int sig)
{
	siginfo_t si;

	/* ESRCH: it was killed meanwhile. */
	if (bt_ptrace(PTRACE_GETSIGINFO, te->tid, 0, (unsigned long)&si))
		return sig;
	if (bt_is_overflow(&si)) {
		bt_drain(te);
		return 0;
	}
	if (te->th && bt_is_crash(sig) && bt_kills(te->tid, sig)) {
		bt_snapshot(te->proc, false);
		bt_drain(te);
		te->proc->crash_reported = true;
		bt_comm(te->th);
		bt_event(te, BT_EV_CRASH, &si);
	}
	return sig;
}

/*
 * PTRACE_EVENT_EXIT.  The threads of a process that a reported signal
 * kills are not reported again; any other end of a thread is.
 */
static void bt_exit_stop(struct bt_tracee *te)
{
	unsigned long code = 0;

	te->exited = true;
	if (!te->th)
		return;
	bt_ptrace(PTRACE_GETEVENTMSG, te->tid, 0, (unsigned long)&code);
	bt_snapshot(te->proc, false);
	bt_drain(te);
	if (te->proc->crash_reported && WIFSIGNALED((int)code))
		return;
	if (te->configured)
		bt_event(te, BT_EV_EXIT, NULL);
}

/*
 * A RET_TRACE of a seccomp filter of the program's own, not ours: do what
 * the kernel does when no tracer is attached, fail the call with ENOSYS.
 */
static void bt_seccomp_untraced(pid_t tid)
{
	bt_ptrace(PTRACE_POKEUSR, tid,
		  offsetof(struct user_regs_struct, orig_rax), -1UL);
	bt_ptrace(PTRACE_POKEUSR, tid,
		  offsetof(struct user_regs_struct, rax), -ENOSYS);
}

static void bt_seccomp(struct bt_tracee *te)
{
	unsigned long data = 0;

	if (bt_ptrace(PTRACE_GETEVENTMSG, te->tid, 0, (unsigned long)&data) ||
	    data != BT_SECCOMP_DATA) {
		bt_seccomp_untraced(te->tid);
		return;
	}
	if (te->th)
		bt_snapshot(te->proc, false);
}

static void bt_new_child(struct bt_tracee *te)
{
	unsigned long child;

	if (bt.r->bts.all)
		bt_drain(te);
	/* Adding may move @te: it is not used after. */
	if (!bt_ptrace(PTRACE_GETEVENTMSG, te->tid, 0, (unsigned long)&child) &&
	    !bt_tracee_find(child))
		bt_tracee_add(child);
}

/*
 * PTRACE_EVENT_STOP (seized tracees only): the first one is that of the
 * attach; one with a stop signal is a group-stop, kept with PTRACE_LISTEN.
 */
static int bt_event_stop(struct bt_tracee *te, int sig)
{
	if (!te->initial_seen) {
		te->initial_seen = true;
		bt_configure(te);
	}
	return sig == SIGTRAP ? 0 : BT_LISTEN;
}

/*
 * A stop of @te: the signal to resume it with, or BT_LISTEN.  Adding a
 * tracee may move @te: the caller finds it again.
 */
static int bt_stop(struct bt_tracee *te, int status)
{
	int sig = WSTOPSIG(status);

	switch (status >> 16) {
	case PTRACE_EVENT_EXEC:
		bt_exec(te);
		return 0;
	case PTRACE_EVENT_EXIT:
		bt_exit_stop(te);
		return 0;
	case PTRACE_EVENT_SECCOMP:
		bt_seccomp(te);
		return 0;
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		bt_new_child(te);
		return 0;
	case PTRACE_EVENT_STOP:
		return bt_event_stop(te, sig);
	case 0:
		return bt_signal(te, sig);
	}
	return 0;
}

#define BT_OPTIONS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | \
		    PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC | \
		    PTRACE_O_TRACEEXIT | PTRACE_O_TRACESECCOMP | \
		    PTRACE_O_EXITKILL)

/*
 * Stop the program and its children before each execve() (x86-64, x32
 * and ia32 alike): the last chance to see the mappings (dlopen'ed
 * libraries too) that the records of the old program need.  Best effort:
 * where seccomp filters cannot be installed, the maps of the last stop
 * before the exec are used.  NO_NEW_PRIVS is set only when the filter
 * needs it, right before the install that it makes succeed.
 */
static void bt_stop_at_exec(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 6),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execve, 9, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execveat, 8, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, BT_NRX32_EXECVE, 7, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, BT_NRX32_EXECVEAT, 6, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_I386, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, BT_NR32_EXECVE, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, BT_NR32_EXECVEAT, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE | BT_SECCOMP_DATA),
	};
	struct sock_fprog prog = { .len = ARRAY_SIZE(f), .filter = f };

	if (!prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) ||
	    errno != EACCES)
		return;
	/* Unprivileged: a traced program gains no privilege at exec anyway. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		bt_err("cannot install the seccomp filter that stops at exec: %s",
		       strerror(errno));
		_exit(BT_EXIT_FAIL);
	}
}

/* /proc/TID/status: the state letter and the tracer; false if gone. */
static bool bt_task_state(pid_t tid, char *state, int *tracer)
{
	struct bt_status st;
	bool alive = bt_read_status(tid, &st);

	*state = st.state;
	*tracer = st.tracer;
	return alive;
}

/*
 * The child of bt_spawn(): wait on @gofd until the tracer has seized it,
 * then run PROG.  Seized rather than PTRACE_TRACEME'd, so that its
 * job-control stops, and its children's, can be kept with PTRACE_LISTEN;
 * told to go through a pipe rather than by a stop and a SIGCONT, which
 * a job-control signal of the terminal could undo before the seize, and
 * which the program could find pending.  EOF: the tracer gave up, and
 * said why.
 */
static void bt_spawn_child(char **argv, int gofd, int errfd)
{
	char go;
	int err;

	bt_stop_at_exec();
	if (read(gofd, &go, 1) != 1)
		_exit(BT_EXIT_FAIL);
	close(gofd);
	execvp(argv[0], argv);
	err = errno;
	if (write(errfd, &err, sizeof(err)) < 0)
		err = ENOENT;
	_exit(err == ENOENT ? BT_EXIT_NOENT : BT_EXIT_NOEXEC);
}

/*
 * PTRACE_SEIZE of the child failed with @err: say why, unless the child
 * died first and said so itself.  Returns a BT_EXIT_* code.
 */
static int bt_spawn_refused(const char *prog, pid_t pid, int err)
{
	int tracer, status;
	char state;

	if (!bt_task_state(pid, &state, &tracer) || state == 'Z' ||
	    state == 'X') {
		if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		    WEXITSTATUS(status))
			return WEXITSTATUS(status);
		bt_err("cannot trace %s: it died before it could be traced",
		       prog);
		return BT_EXIT_FAIL;
	}
	if (err == EPERM && tracer)
		bt_err("cannot trace %s: process %d traces it already (does a tracer that follows forks trace btrace?)",
		       prog, tracer);
	else
		bt_err("cannot trace %s: PTRACE_SEIZE: %s%s", prog,
		       strerror(err), err != EPERM ? "" :
		       " (refused by a security module or the ptrace scope: see /proc/sys/kernel/yama/ptrace_scope)");
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return err == EPERM ? BT_EXIT_PERM : BT_EXIT_FAIL;
}

/* Start PROG, seized before its exec; returns 0 or a BT_EXIT_* code. */
static int bt_spawn(char **argv, int *errfd)
{
	int fds[2], go[2], ret;
	sighandler_t pipe_was;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC)) {
		bt_err("pipe: %s", strerror(errno));
		return BT_EXIT_FAIL;
	}
	if (pipe2(go, O_CLOEXEC)) {
		bt_err("pipe: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return BT_EXIT_FAIL;
	}
	pid = fork();
	if (pid < 0) {
		bt_err("fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		close(go[0]);
		close(go[1]);
		return BT_EXIT_FAIL;
	}
	if (!pid) {
		close(fds[0]);
		close(go[1]);
		bt_spawn_child(argv, go[0], fds[1]);
	}
	close(fds[1]);
	close(go[0]);
	*errfd = fds[0];
	if (bt_ptrace(PTRACE_SEIZE, pid, 0, BT_OPTIONS)) {
		/* The child waits on @go until bt_spawn_refused() has seen it. */
		ret = bt_spawn_refused(argv[0], pid, errno);
		close(go[1]);
		return ret;
	}
	bt.main = pid;
	/* Its buffer comes at the exec: btrace's own code is no one's trace. */
	bt_tracee_add(pid)->initial_seen = true;
	/* A child that died meanwhile is reaped by the loop, not SIGPIPE. */
	pipe_was = signal(SIGPIPE, SIG_IGN);
	ret = write(go[1], "", 1) == 1 ? 0 : -errno;
	signal(SIGPIPE, pipe_was);
	close(go[1]);
	if (ret && ret != -EPIPE) {
		bt_err("cannot start %s: %s", argv[0], strerror(-ret));
		return BT_EXIT_FAIL;
	}
	return 0;
}

static void bt_on_signal(int sig)
{
	if (sig != SIGCHLD)
		__atomic_store_n(&bt_interrupted, 1, __ATOMIC_RELAXED);
}

/*
 * Block SIGCHLD (and with -p SIGINT and SIGTERM, which detach): they are
 * taken only while bt_wait() sleeps.
 */
static void bt_signals_block(bool attach)
{
	struct sigaction sa = { .sa_handler = bt_on_signal };
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	if (attach) {
		sigaddset(&set, SIGINT);
		sigaddset(&set, SIGTERM);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	sigaction(SIGCHLD, &sa, NULL);
	sigprocmask(SIG_BLOCK, &set, &bt.oldmask);
	bt.waitmask = bt.oldmask;
	sigdelset(&bt.waitmask, SIGCHLD);
	sigdelset(&bt.waitmask, SIGINT);
	sigdelset(&bt.waitmask, SIGTERM);
}

/* waitpid() for any tracee; -1 with bt_interrupted set after Ctrl-C. */
static pid_t bt_wait(int *status)
{
	pid_t tid;

	for (;;) {
		if (bt_was_interrupted())
			return -1;
		tid = waitpid(-1, status, __WALL | WNOHANG);
		if (tid)
			return tid;
		sigsuspend(&bt.waitmask);
	}
}

/* Whether the ptrace scope, not ownership, refuses the attach. */
static bool bt_scope_refuses(void)
{
	unsigned long long eff = 0;
	char line[128];
	int scope = 0;
	FILE *f;

	f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
	if (!f)
		return false;
	if (fscanf(f, "%d", &scope) != 1)
		scope = 0;
	fclose(f);
	f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	if (f)
		fclose(f);
	/* Scope 1 and 2 let CAP_SYS_PTRACE (19) attach; 3 nobody. */
	return scope >= 3 || (scope >= 1 && !(eff & (1ULL << 19)));
}

/*
 * PTRACE_SEIZE of @tid said EPERM: a thread that exited (a zombie main
 * thread) is skipped, one that a clone event attached already is adopted;
 * else say why.  Returns 0 or a BT_EXIT_* code.
 */
static int bt_attach_eperm(pid_t tid)
{
	int tracer;
	char state;

	if (!bt_task_state(tid, &state, &tracer) || state == 'Z' ||
	    state == 'X')
		return 0;
	if (tracer == getpid()) {
		bt_tracee_add(tid);
		return 0;
	}
	if (tracer)
		bt_err("cannot attach to %d: process %d traces it already",
		       (int)tid, tracer);
	else if (bt_scope_refuses())
		bt_err("cannot attach to %d: refused by the ptrace scope: see /proc/sys/kernel/yama/ptrace_scope",
		       (int)tid);
	else
		bt_err("cannot attach to %d: not permitted (another user's process, one that is not dumpable, or a security module)",
		       (int)tid);
	return BT_EXIT_PERM;
}

/* Seize the threads of @pid in /proc/PID/task; returns a BT_EXIT_* code. */
static int bt_attach_dir(DIR *d, bool *added)
{
	struct dirent *de;
	int ret;

	while ((de = readdir(d))) {
		pid_t tid = atoi(de->d_name);

		if (tid <= 0 || bt_tracee_find(tid))
			continue;
		if (!bt_ptrace(PTRACE_SEIZE, tid, 0,
			       BT_OPTIONS & ~PTRACE_O_EXITKILL)) {
			bt_ptrace(PTRACE_INTERRUPT, tid, 0, 0);
			bt_tracee_add(tid);
			*added = true;
			continue;
		}
		if (errno == ESRCH)
			continue;
		if (errno != EPERM) {
			bt_err("cannot attach to %d: %s", (int)tid,
			       strerror(errno));
			return BT_EXIT_FAIL;
		}
		ret = bt_attach_eperm(tid);
		if (ret)
			return ret;
	}
	return 0;
}

/* Seize every thread of @pid until no new one appears. */
static int bt_attach(pid_t pid)
{
	bool added = true;
	char path[64];
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	while (added) {
		DIR *d = opendir(path);

		if (!d) {
			bt_err("no process %d", (int)pid);
			return BT_EXIT_FAIL;
		}
		added = false;
		ret = bt_attach_dir(d, &added);
		closedir(d);
		if (ret)
			return ret;
	}
	if (!bt.ntracees) {
		bt_err("no thread of process %d is left to attach to",
		       (int)pid);
		return BT_EXIT_FAIL;
	}
	bt.main = pid;
	return 0;
}

/* Whether a tracee that still stops has not stopped for the detach yet. */
static bool bt_detach_waiting(void)
{
	size_t i;

	for (i = 0; i < bt.ntracees; i++)
		if (!bt.tracees[i].stopped && !bt.tracees[i].exited)
			return true;
	return false;
}

/* Stop every tracee that runs; a tracee past its exit stops no more. */
static void bt_stop_all(void)
{
	int status;
	pid_t tid;
	size_t i;

	for (i = 0; i < bt.ntracees; i++) {
		struct bt_tracee *te = &bt.tracees[i];

		if (!te->stopped && !te->exited &&
		    bt_ptrace(PTRACE_INTERRUPT, te->tid, 0, 0))
			te->exited = true;	/* gone */
	}
	while (bt_detach_waiting() &&
	       (tid = waitpid(-1, &status, __WALL)) > 0) {
		struct bt_tracee *te = bt_tracee_find(tid);

		if (!te || te->stopped)
			continue;
		if (!WIFSTOPPED(status)) {
			bt_tracee_del(te);
			continue;
		}
		te->stopped = true;
		if ((status >> 16) == 0 &&
		    !(WSTOPSIG(status) == SIGTRAP && bt_emu_step(tid)))
			te->pending = bt_give_back(tid, WSTOPSIG(status));
	}
}

/*
 * With -p, at Ctrl-C (@report) or a failure: stop every thread, report
 * it and let it go, with the signal it was stopped for unless that is
 * btrace's own overflow signal.
 */
static void bt_detach_all(bool report)
{
	size_t i;

	bt_stop_all();
	for (i = 0; i < bt.ntracees; i++) {
		struct bt_tracee *te = &bt.tracees[i];

		if (!te->stopped)
			continue;
		if (!te->pending)
			bt_emu_settle(te->tid);
		if (report && te->th && te->configured) {
			bt_snapshot(te->proc, false);
			bt_drain(te);
			bt_event(te, BT_EV_DETACH, NULL);
		}
		bt_ptrace(PTRACE_DETACH, te->tid, 0, te->pending);
	}
	while (bt.ntracees)
		bt_tracee_del(&bt.tracees[0]);
}

static void bt_reap(struct bt_tracee *te, pid_t tid, int status)
{
	if (te)
		bt_tracee_del(te);
	if (tid != bt.main)
		return;
	bt.status = WIFEXITED(status) ? WEXITSTATUS(status) :
					128 + WTERMSIG(status);
	/* An exec that failed is no program's end: bt_run() says why. */
	if (!bt.t->nthreads) {
		if (WIFSIGNALED(status))
			bt_err("the program was killed by signal %d before it started",
			       WTERMSIG(status));
		return;
	}
	bt_event_add(bt.t, BT_EV_END, NULL)->status = bt.status;
	bt.t->events[bt.t->nevents - 1].tid = tid;
	bt_view_event(bt.t, &bt.t->events[bt.t->nevents - 1], &bt.r->view);
	fflush(stdout);
}

static void bt_resume(pid_t tid, int sig)
{
	if (sig == BT_LISTEN)
		bt_ptrace(PTRACE_LISTEN, tid, 0, 0);
	else if (bt_emu_resume(tid, sig))
		bt_ptrace(PTRACE_CONT, tid, 0, sig);
}

static void bt_loop(void)
{
	struct bt_tracee *te;
	int status, sig;
	pid_t tid;

	while (!bt.fatal) {
		tid = bt_wait(&status);
		if (tid < 0) {
			if (bt_was_interrupted())
				bt_detach_all(true);
			return;
		}
		te = bt_tracee_find(tid);
		if (!WIFSTOPPED(status)) {
			bt_reap(te, tid, status);
			continue;
		}
		if (!te)
			te = bt_tracee_add(tid);
		/* The test mode's own single-step traps. */
		if ((status >> 16) == 0 && WSTOPSIG(status) == SIGTRAP &&
		    bt_emu_step(tid))
			sig = 0;
		else
			sig = bt_stop(te, status);
		if (!bt.fatal) {
			bt_resume(tid, sig);
			continue;
		}
		/* Left in its stop, for bt_abandon(). */
		te = bt_tracee_find(tid);
		if (te) {
			te->stopped = true;
			te->pending = sig > 0 ? sig : 0;
		}
	}
}

/* The run failed: let the attached program go, or kill the one we ran. */
static void bt_abandon(void)
{
	int status;
	pid_t tid;
	size_t i;

	if (bt.r->attach) {
		bt_detach_all(false);
		return;
	}
	for (i = 0; i < bt.ntracees; i++)
		kill(bt.tracees[i].tid, SIGKILL);
	/* A killed tracee may still stop at PTRACE_EVENT_EXIT. */
	while ((tid = waitpid(-1, &status, __WALL)) > 0)
		if (WIFSTOPPED(status))
			bt_ptrace(PTRACE_CONT, tid, 0, 0);
}

/**
 * bt_run() - trace a program from start to end, or until Ctrl-C
 * @t: the trace to fill (and render from, as it fills)
 * @r: what to run and how
 *
 * Return: the program's status, or a BT_EXIT_* code.
 */
int bt_run(struct bt_trace *t, struct bt_run *r)
{
	int errfd = -1, err = 0, ret;

	bt.t = t;
	bt.r = r;
	bt.buf = bt_alloc(r->bts.records * sizeof(*bt.buf));
	if (r->attach) {
		bt_signals_block(true);
		ret = bt_attach(r->attach);
	} else {
		ret = bt_spawn(r->argv, &errfd);
		/* Ctrl-C is for the program, which dies of it or not. */
		signal(SIGINT, SIG_IGN);
		bt_signals_block(false);
	}
	if (!ret) {
		bt_loop();
		ret = bt.fatal ? bt.fatal : bt.status;
	}
	if (bt.fatal || ret)
		bt_abandon();
	if (errfd >= 0) {
		if (read(errfd, &err, sizeof(err)) == sizeof(err)) {
			bt_err("cannot run %s: %s", r->argv[0], strerror(err));
			t->nevents = 0;
		}
		close(errfd);
	}
	sigprocmask(SIG_SETMASK, &bt.oldmask, NULL);
	free(bt.buf);
	while (bt.ntracees)
		bt_tracee_del(&bt.tracees[0]);
	free(bt.tracees);
	free(bt.procs);
	bt_emu_exit();
	return ret;
}
