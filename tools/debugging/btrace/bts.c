// SPDX-License-Identifier: GPL-2.0
/*
 * The PTRACE_BTS_* requests, the buffer sizes that fit RLIMIT_MEMLOCK, and
 * the errors a person can act on.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "btrace.h"

/* A kernel's <asm/ptrace-abi.h> without the series lacks these. */
#ifndef PTRACE_BTS_CONFIG
#define PTRACE_BTS_CONFIG	40
#define PTRACE_BTS_STATUS	41
#define PTRACE_BTS_SIZE		42
#define PTRACE_BTS_GET		43
#define PTRACE_BTS_CLEAR	44
#define PTRACE_BTS_DRAIN	45
#endif

/* What the kernel keeps of a record and charges to RLIMIT_MEMLOCK. */
#define BT_KERNEL_REC		24
#define BT_PAGE			4096UL
#define BT_RECORDS_MAX		(PTRACE_BTS_SIZE_MAX / sizeof(struct bts_struct))
#define BT_DEFAULT_RING		16384
#define BT_DEFAULT_ALL		65536
/* Buffers the default size leaves room for: threads share the limit. */
#define BT_DEFAULT_SHARE	8

static unsigned long bt_charge(u32 records)
{
	unsigned long b = (unsigned long)records * BT_KERNEL_REC;

	return (b + BT_PAGE - 1) & ~(BT_PAGE - 1);
}

/* CAP_IPC_LOCK (14) locks without a limit. */
static bool bt_ipc_lock(void)
{
	unsigned long long eff = 0;
	char line[128];
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return eff & (1ULL << 14);
}

static unsigned long bt_memlock(void)
{
	struct rlimit rl;

	if (bt_ipc_lock() || getrlimit(RLIMIT_MEMLOCK, &rl) ||
	    rl.rlim_cur == RLIM_INFINITY)
		return ~0UL;
	return rl.rlim_cur;
}

/**
 * bt_bts_size() - choose the buffer size of each thread
 * @o: the options; @o->records is set
 * @user_set: @o->records was given with -s, else pick a default
 *
 * A default fits BT_DEFAULT_SHARE buffers under RLIMIT_MEMLOCK; a size
 * asked for is kept as asked (the kernel says ENOMEM if it does not fit,
 * and bt_bts_explain() says why).
 *
 * Return: 0, or -EINVAL for a size out of range (with a message).
 */
int bt_bts_size(struct bt_bts_opts *o, bool user_set)
{
	unsigned long limit = bt_memlock();
	u32 min = o->all ? PTRACE_BTS_LOSSLESS_MIN_SIZE /
			   sizeof(struct bts_struct) : 1;

	if (user_set) {
		if (o->records >= min && o->records <= BT_RECORDS_MAX)
			return 0;
		bt_err("buffer size %u is out of range: %u to %lu records%s",
		       o->records, min, (unsigned long)BT_RECORDS_MAX,
		       o->all ? " with --all" : "");
		return -EINVAL;
	}
	o->records = o->all ? BT_DEFAULT_ALL : BT_DEFAULT_RING;
	while (o->records > 256 &&
	       bt_charge(o->records) > limit / BT_DEFAULT_SHARE)
		o->records /= 2;
	return 0;
}

/**
 * bt_bts_config() - give a stopped tracee its buffer and start recording
 * @tid: the tracee
 * @o: what to record
 *
 * Return: 0 or -errno.
 */
int bt_bts_config(pid_t tid, const struct bt_bts_opts *o)
{
	struct ptrace_bts_config cfg = {
		.size = o->records * sizeof(struct bts_struct),
		.flags = PTRACE_BTS_O_ALLOC | PTRACE_BTS_O_TRACE,
		.bts_size = sizeof(struct bts_struct),
	};

	if (bt_emu_enabled())
		return bt_emu_config(tid, o->records);
	if (o->sched)
		cfg.flags |= PTRACE_BTS_O_SCHED;
	if (o->all) {
		cfg.flags |= PTRACE_BTS_O_SIGNAL | PTRACE_BTS_O_LOSSLESS;
		cfg.signal = o->signal;
	}
	if (syscall(SYS_ptrace, PTRACE_BTS_CONFIG, tid, &cfg, sizeof(cfg)))
		return -errno;
	return 0;
}

/**
 * bt_bts_explain() - say why bt_bts_config() failed, and what to do
 * @err: its -errno
 * @o: what was asked
 * @tid: the tracee
 */
void bt_bts_explain(int err, const struct bt_bts_opts *o, pid_t tid)
{
	unsigned long limit = bt_memlock();

	switch (err) {
	case -EOPNOTSUPP:
		bt_err("this CPU has no Branch Trace Store (BTS); run btrace on an Intel CPU that has it, or in the BTS model: `make run` boots a model that has it");
		break;
	case -EIO:
		bt_err("this kernel does not know PTRACE_BTS_CONFIG: it lacks the branch trace series (CONFIG_X86_PTRACE_BTS); `make run` boots a kernel and a model that have it");
		break;
	case -EACCES:
		bt_err("branch tracing of %d refused: it needs what perf_event_open() needs; see /proc/sys/kernel/perf_event_paranoid (at most 2 without CAP_SYS_ADMIN) or a security module",
		       (int)tid);
		break;
	case -EPERM:
	case -ENOMEM:
		if (limit != ~0UL) {
			bt_err("a buffer of %u records locks %lu KiB, over what RLIMIT_MEMLOCK (%lu KiB, `ulimit -l`) or the memory cgroup leaves; ask for less with -s, raise the limit, or run with CAP_IPC_LOCK",
			       o->records, bt_charge(o->records) >> 10,
			       limit >> 10);
			break;
		}
		bt_err("cannot allocate a buffer of %u records (%lu KiB) for %d: %s (the memory cgroup's limit?)",
		       o->records, bt_charge(o->records) >> 10, (int)tid,
		       strerror(-err));
		break;
	case -EBUSY:
		bt_err("BTS is in use by perf or another tracer of %d; try again when it is done",
		       (int)tid);
		break;
	case -EINVAL:
		if (o->all)
			bt_err("the kernel refused the configuration (EINVAL): it may be older than this btrace (no PTRACE_BTS_O_LOSSLESS?); try without --all");
		else
			bt_err("the kernel refused the configuration of %d (EINVAL)",
			       (int)tid);
		break;
	default:
		bt_err("PTRACE_BTS_CONFIG of %d: %s", (int)tid, strerror(-err));
	}
}

/**
 * bt_bts_exit_code() - btrace's exit code for a failed configuration
 * @err: the -errno of bt_bts_config()
 *
 * Return: a BT_EXIT_* code.
 */
int bt_bts_exit_code(int err)
{
	switch (err) {
	case -EOPNOTSUPP:
	case -EIO:
		return BT_EXIT_NOBTS;
	case -EPERM:
	case -ENOMEM:
		return BT_EXIT_MEMLOCK;
	case -EACCES:
		return BT_EXIT_PERM;
	default:
		return BT_EXIT_FAIL;
	}
}

/**
 * bt_bts_drain() - take the records of a stopped tracee, oldest first
 * @tid: the tracee
 * @buf: room for them
 * @bytes: the size of @buf, at least the tracee's buffer
 *
 * Return: the number of records, or -errno.
 */
long bt_bts_drain(pid_t tid, struct bts_struct *buf, size_t bytes)
{
	long n;

	if (bt_emu_enabled())
		return bt_emu_drain(tid, buf, bytes);
	n = syscall(SYS_ptrace, PTRACE_BTS_DRAIN, tid, buf, bytes);

	return n < 0 ? -errno : n;
}

/**
 * bt_bts_lost() - records a linear buffer dropped since it was emptied
 * @tid: the tracee
 * @lost: set to their number
 *
 * Return: 0 or -errno.
 */
int bt_bts_lost(pid_t tid, u64 *lost)
{
	struct ptrace_bts_config cfg = { 0 };

	*lost = 0;
	if (bt_emu_enabled())
		return 0;
	if (syscall(SYS_ptrace, PTRACE_BTS_STATUS, tid, &cfg, sizeof(cfg)))
		return -errno;
	*lost = cfg.lost;
	return 0;
}
