/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Branch trace for debuggers (arch/x86/kernel/ptrace_bts.c): what the
 * file shares with its KUnit suite, arch/x86/kernel/ptrace_bts_test.c.
 */
#ifndef _X86_KERNEL_PTRACE_BTS_INTERNAL_H
#define _X86_KERNEL_PTRACE_BTS_INTERNAL_H

#include <linux/bits.h>
#include <linux/irq_work.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct ds_bts_record;
struct ds_tracer;
struct sigqueue;
struct task_struct;
struct ucounts;

/**
 * struct ptrace_bts - the branch trace of one tracee
 * @task: the tracee (a reference)
 * @ucounts: the tracer's user, charged for @pages (a reference); %NULL
 *	if nothing is charged
 * @pages: the pages charged to @ucounts' %UCOUNT_RLIMIT_MEMLOCK
 * @buf: the buffer, zeroed where no record is; never %NULL
 * @nr: the capacity of @buf in records; with %PTRACE_BTS_O_LOSSLESS the
 *	arbiter gets all but the last, which a BTS_LOST record takes
 * @count: while @tracer is %NULL, the records in @buf[0, @count), oldest
 *	first; else the arbiter's write index says
 * @tracer: the arbiter's tracer while %PTRACE_BTS_O_TRACE or
 *	%PTRACE_BTS_O_SCHED is on
 * @size: the configured size (bytes of struct bts_struct)
 * @flags: the PTRACE_BTS_O_* flags in effect, without %PTRACE_BTS_O_ALLOC
 * @lost: records dropped since the buffer was last emptied by tracers
 *	that @tracer replaced; @tracer counts its own (ds_get_lost())
 * @signal: the overflow signal
 * @sigq: the overflow signal's sigqueue, owned (see owned_sigqueue_send());
 *	%NULL until %PTRACE_BTS_O_SIGNAL is first asked for
 * @sent: the signal @sigq was queued with, while it may still be pending;
 *	0 if none.  Under the task's siglock.
 * @delivered: the signal @sigq was last dequeued with, 0 if none: it may be
 *	the verdict of a signal-delivery-stop, which a take-back cannot
 *	undo; see ptrace_bts_cancel_stop_signal().  Under the task's siglock.
 * @orphan: the ptrace link it was made for is gone; see the serialization
 *	rules in ptrace_bts.c
 * @signal_work: sends @signal, see ptrace_bts_signal()
 * @charge_root: once an orphan, the root of @ucounts' users, see
 *	ptrace_bts_charge_root(); %NULL if nothing is charged
 * @orphan_seq: once an orphan, its number in the order orphans were made
 * @orphan_node: on the orphanage's list
 */
struct ptrace_bts {
	struct task_struct *task;
	struct ucounts *ucounts;
	unsigned long pages;
	struct ds_bts_record *buf;
	size_t nr;
	size_t count;
	struct ds_tracer *tracer;
	u32 size;
	u32 flags;
	u32 signal;
	u64 lost;
	struct sigqueue *sigq;
	int sent;
	int delivered;
	bool orphan;
	struct irq_work signal_work;
	const struct ucounts *charge_root;
	u64 orphan_seq;
	struct list_head orphan_node;
};

/**
 * struct ptrace_bts_orphanage - traces whose ptrace link is gone
 * @reap_mutex: held by whoever takes an orphan off @list and frees it,
 *	one orphan per hold
 * @lock: protects @list, @made and @freed; taken inside a tracee's
 *	siglock
 * @list: the orphans, oldest first
 * @made: the number of orphans made, the last one's &ptrace_bts.orphan_seq
 * @freed: the number of orphans freed; also read without @lock, with
 *	acquire
 * @reaper: frees every orphan, oldest first
 *
 * The kernel has one, ptrace_bts_orphans; the KUnit suite makes its own
 * with ptrace_bts_orphanage_init().
 */
struct ptrace_bts_orphanage {
	struct mutex reap_mutex;	/* one orphan freed per hold */
	spinlock_t lock;		/* @list, @made, @freed */
	struct list_head list;
	u64 made;
	unsigned long freed;
	struct work_struct reaper;
};

/* Which orphans a failed CONFIG wants gone. */
enum ptrace_bts_want {
	PTRACE_BTS_WANT_NOTHING	= 0,
	PTRACE_BTS_WANT_BTS	= BIT(0),	/* -EBUSY: its tracee's */
	PTRACE_BTS_WANT_USER	= BIT(1),	/* -ENOMEM: its user's */
	PTRACE_BTS_WANT_ANY	= BIT(2),	/* the reaper: all */
};

/*
 * What a CONFIG that failed knew before it tried: the count of freed
 * orphans, and the number of the last orphan made.  Later orphans are not
 * its business.
 */
struct ptrace_bts_orphans_seen {
	unsigned long freed;
	u64 last;
};

/* What ptrace_bts_free_orphan_in_the_way() did. */
enum ptrace_bts_freed {
	PTRACE_BTS_FREED_NOTHING,	/* nothing was given back */
	PTRACE_BTS_FREED_ELSEWHERE,	/* an orphan went, maybe not one in the way */
	PTRACE_BTS_FREED_IN_THE_WAY,	/* it freed one in the way */
};

/* Internals visible to KUnit, see <kunit/visibility.h>. */
#if IS_ENABLED(CONFIG_KUNIT)
struct ptrace_bts *ptrace_bts_alloc(struct task_struct *task);
void ptrace_bts_reap(struct work_struct *work);
const struct ucounts *ptrace_bts_charge_root(struct ucounts *ucounts);
void ptrace_bts_adopt(struct ptrace_bts_orphanage *o, struct ptrace_bts *bts);
enum ptrace_bts_freed
ptrace_bts_free_orphan_in_the_way(struct ptrace_bts_orphanage *o,
				  const struct task_struct *child,
				  enum ptrace_bts_want want,
				  const struct ucounts *root,
				  const struct ptrace_bts_orphans_seen *seen);

/*
 * An empty orphanage, for the suite: the kernel's own, ptrace_bts_orphans,
 * is made at build time.
 */
static inline void ptrace_bts_orphanage_init(struct ptrace_bts_orphanage *o)
{
	mutex_init(&o->reap_mutex);
	spin_lock_init(&o->lock);
	INIT_LIST_HEAD(&o->list);
	o->made = 0;
	o->freed = 0;
	INIT_WORK(&o->reaper, ptrace_bts_reap);
}
#endif

#endif /* _X86_KERNEL_PTRACE_BTS_INTERNAL_H */
