// SPDX-License-Identifier: GPL-2.0
/*
 * Branch trace for debuggers: the PTRACE_BTS_* requests.
 *
 * A tracer gives its tracee a buffer and asks for its branches
 * (PTRACE_BTS_O_TRACE, the BTS hardware) and for records of its context
 * switches (PTRACE_BTS_O_SCHED, software), then reads them at a stop.  The
 * recording is done by the Debug Store arbiter (arch/x86/kernel/ds.c): this
 * file owns the buffer, charges it to the tracer's user against its
 * RLIMIT_MEMLOCK, turns the arbiter's records into struct bts_struct and
 * keeps kernel addresses from the tracer.  A trace belongs to the ptrace
 * link it was made through and ends with it.
 *
 * Every request comes from the tracer with the tracee stopped and frozen
 * (ptrace_check_attach()), so the tracee does not run, switch or exit while
 * one is served, and its records are in the buffer: the arbiter drains the
 * hardware into it when the tracee is switched out.
 *
 * See Documentation/arch/x86/ptrace-bts.rst.
 */

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/err.h>
#include <linux/irq_work.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/mutex.h>
#include <linux/mm.h>
#include <linux/perf_event.h>
#include <linux/pid.h>
#include <linux/ptrace.h>
#include <linux/resource.h>
#include <linux/sched.h>
#include <linux/sched/jobctl.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/security.h>
#include <linux/user_namespace.h>
#include <linux/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include <kunit/visibility.h>

#include <asm/ds.h>
#include <asm/ptrace-bts.h>

#include "ptrace_bts.h"
#include "ptrace_bts_internal.h"

/* One layout for every tracer: no implicit padding, no longs. */
static_assert(sizeof(struct ptrace_bts_config) ==
	      PTRACE_BTS_CONFIG_SIZE_VER1);
static_assert(offsetof(struct ptrace_bts_config, lost) ==
	      PTRACE_BTS_CONFIG_SIZE_VER0);
static_assert(PTRACE_BTS_SI_ERRNO == ENOBUFS);
static_assert(sizeof(struct bts_struct) == 32);
static_assert(offsetof(struct bts_struct, from) == 8);
static_assert(offsetof(struct bts_struct, clock) == 24);
static_assert(sizeof(struct ds_bts_record) == DS_BTS_RECORD_SIZE);
static_assert(PTRACE_BTS_SIZE_MAX / sizeof(struct bts_struct) <= INT_MAX);

/*
 * Records translated per copy to user space, on the stack: DRAIN needs no
 * memory, so it has no ENOMEM to fail with.
 */
#define PTRACE_BTS_CHUNK	16

/*
 * Serialization of a trace, without a lock of its own:
 *
 * 1. A task's thread.ptrace_bts is set and its struct ptrace_bts used by
 *    the task's tracer while the task is frozen in a ptrace stop
 *    (ptrace_check_attach() to ptrace_unfreeze_traced(): requests and
 *    ptrace_disable()).  A frozen task neither runs nor exits, and only
 *    one tracer at a time has it frozen.  ptrace_bts_assert_frozen()
 *    checks it where it is relied on.
 * 2. The pointer is taken away, with xchg(), by whoever ends the trace:
 *    the tracer detaching (ptrace_disable()), the task exiting
 *    (exit_thread()) and __ptrace_unlink() (ptrace_bts_unlink()), whoever
 *    comes first; the one that takes it frees it.  ptrace_bts_unlink()
 *    runs in the tracer's own thread (detach, its exit) or for a task
 *    that is dead, so never during a request (rule 1); it can run while
 *    the task exits, which is what xchg() decides.
 * 3. An orphan, a trace whose link is gone, belongs to whoever takes it
 *    off ptrace_bts_orphans: the reaper, or a CONFIG that wants what it
 *    holds.  It keeps recording until it is freed, but nobody
 *    sees its records and it sends no signal (rule 4).
 * 4. The overflow signal is sent under the task's siglock, unless @orphan
 *    is set; ptrace_bts_unlink() sets @orphan under the same siglock
 *    before the link goes, so no signal reaches a task that is not traced
 *    by the tracer that asked for it.
 * 5. @task and @signal do not change while @tracer has records:
 *    ptrace_bts_stop() waits for the arbiter's callback and then for
 *    @signal_work; ptrace_bts_commit() sets @signal after ds_replace()
 *    waited for the old tracer's callback and before the new tracer has
 *    a record.
 * 6. Hence no global lock held across a request: a tracer whose copy to
 *    user space faults slowly (userfaultfd) holds up no one but itself.
 *    Only orphans are on a global list, in ptrace_bts_orphans.
 */
static void ptrace_bts_assert_frozen(struct task_struct *task)
{
	WARN_ON_ONCE(!(READ_ONCE(task->jobctl) & JOBCTL_PTRACE_FROZEN));
}

/*
 * Memory accounting: the buffer is locked kernel memory the tracer asked
 * for.  Like SHM_LOCK'ed shared memory, it is charged to the tracer's user
 * (its ucounts' %UCOUNT_RLIMIT_MEMLOCK, whatever process of the user holds
 * it) against the tracer's RLIMIT_MEMLOCK, until the buffer is freed,
 * whoever frees it; the pages themselves are charged to the tracer's
 * memory cgroup (__GFP_ACCOUNT).  CAP_IPC_LOCK locks without a limit and
 * uncharged.
 *
 * Return: the user charged (a reference), %NULL if nothing was charged,
 * ERR_PTR(-EPERM) for a limit of 0, ERR_PTR(-ENOMEM) above the limit.
 */
static struct ucounts *ptrace_bts_charge(unsigned long pages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	struct ucounts *ucounts;
	long locked;

	if (capable(CAP_IPC_LOCK))
		return NULL;
	/* As mlock(2): no allowance at all is a matter of privilege. */
	if (!limit)
		return ERR_PTR(-EPERM);

	ucounts = get_ucounts(current_ucounts());
	if (!ucounts)
		return ERR_PTR(-ENOMEM);
	locked = inc_rlimit_ucounts(ucounts, UCOUNT_RLIMIT_MEMLOCK, pages);
	/* LONG_MAX: the limit of a parent user namespace. */
	if (locked == LONG_MAX || locked > limit) {
		dec_rlimit_ucounts(ucounts, UCOUNT_RLIMIT_MEMLOCK, pages);
		put_ucounts(ucounts);
		return ERR_PTR(-ENOMEM);
	}
	return ucounts;
}

static void ptrace_bts_uncharge(struct ucounts *ucounts, unsigned long pages)
{
	if (!ucounts)
		return;
	dec_rlimit_ucounts(ucounts, UCOUNT_RLIMIT_MEMLOCK, pages);
	put_ucounts(ucounts);
}

static unsigned long ptrace_bts_pages(size_t nr)
{
	return PAGE_ALIGN(nr * sizeof(struct ds_bts_record)) >> PAGE_SHIFT;
}

/*
 * Records.
 */

/* Where the records are: @first, the oldest, and how many. */
static void ptrace_bts_span(struct ptrace_bts *bts, size_t *first,
			    size_t *count)
{
	size_t index = 0;

	*first = 0;
	if (!bts->tracer) {
		*count = bts->count;
		return;
	}

	if (WARN_ON_ONCE(ds_get_index(bts->tracer, &index)))
		index = 0;
	*count = index;
	/*
	 * A linear buffer (O_SIGNAL) does not wrap.  A circular one has
	 * wrapped if the slot at the write index holds a record: the buffer
	 * is zeroed whenever it is emptied, and every record has a non-zero
	 * @from (a user address or DS_BTS_ESCAPE).
	 */
	if (!(bts->flags & PTRACE_BTS_O_SIGNAL) && index < bts->nr &&
	    bts->buf[index].from) {
		*first = index;
		*count = bts->nr;
	}
}

static const struct ds_bts_record *ptrace_bts_at(struct ptrace_bts *bts,
						 size_t first, size_t i)
{
	i += first;
	if (i >= bts->nr)
		i -= bts->nr;
	return &bts->buf[i];
}

/*
 * The user's view of a record.  The arbiter traces user mode only and
 * blanks kernel targets, so the address checks should find nothing; they
 * are here so that no kernel address reaches the tracer whatever the layer
 * below does.
 */
static u32 ptrace_bts_escape_qualifier(u64 qual)
{
	switch (qual) {
	case DS_BTS_TASK_ARRIVES:
		return BTS_TASK_ARRIVES;
	case DS_BTS_TASK_DEPARTS:
		return BTS_TASK_DEPARTS;
	case DS_BTS_EXEC:
		return BTS_TASK_EXEC;
	default:
		return BTS_INVALID;
	}
}

/* Every field is set once, without a memset: this is most of a DRAIN. */
static void ptrace_bts_translate(const struct ds_bts_record *raw, u32 pid,
				 struct bts_struct *out)
{
	u32 qual;

	if (raw->from == DS_BTS_ESCAPE) {
		qual = ptrace_bts_escape_qualifier(raw->to);
		out->qualifier = qual;
		out->pid = qual ? pid : 0;
		out->from = 0;
		out->to = 0;
		out->clock = qual ? raw->flags : 0;
		return;
	}

	qual = raw->from && raw->from < TASK_SIZE_MAX ? BTS_BRANCH :
						      BTS_INVALID;
	out->qualifier = qual;
	out->pid = 0;
	out->from = qual ? raw->from : 0;
	out->to = qual && raw->to < TASK_SIZE_MAX ? raw->to : 0;
	out->clock = 0;
}

/* The tracee's thread id as the tracer sees it. */
static u32 ptrace_bts_pid(struct ptrace_bts *bts)
{
	return task_pid_nr_ns(bts->task, task_active_pid_ns(current));
}

/* The records dropped since the buffer was last emptied. */
static u64 ptrace_bts_lost(struct ptrace_bts *bts)
{
	u64 lost = 0;

	if (bts->tracer)
		WARN_ON_ONCE(ds_get_lost(bts->tracer, &lost));
	return bts->lost + lost;
}

/*
 * Whether the records end with a BTS_LOST record: with
 * %PTRACE_BTS_O_LOSSLESS, after a loss.  It stands in the last slot of
 * the buffer, kept from the arbiter for it, so a DRAIN of the buffer's
 * size never lacks room for it.
 */
static bool ptrace_bts_has_lost_record(struct ptrace_bts *bts)
{
	return (bts->flags & PTRACE_BTS_O_LOSSLESS) && ptrace_bts_lost(bts);
}

static void ptrace_bts_lost_record(struct ptrace_bts *bts, u32 pid,
				   struct bts_struct *out)
{
	memset(out, 0, sizeof(*out));
	out->qualifier = BTS_LOST;
	out->pid = pid;
	out->clock = ptrace_bts_lost(bts);
}

/* The records a tracer sees: those in the buffer and a BTS_LOST one. */
static size_t ptrace_bts_count(struct ptrace_bts *bts)
{
	size_t first, count;

	ptrace_bts_span(bts, &first, &count);
	return count + ptrace_bts_has_lost_record(bts);
}

/*
 * Tracing.
 */

/* Note whether the signal sent has left the queue since. */
static void ptrace_bts_note_delivered(struct ptrace_bts *bts)
{
	lockdep_assert_held(&bts->task->sighand->siglock);

	if (bts->sent && list_empty(&bts->sigq->list)) {
		bts->delivered = bts->sent;
		bts->sent = 0;
	}
}

/*
 * The signal, from an irq_work that PREEMPT_RT runs in a thread: siglock
 * is a spinlock_t, which hard interrupt context may not take there.
 */
static void ptrace_bts_signal(struct irq_work *work)
{
	struct ptrace_bts *bts = container_of(work, struct ptrace_bts,
					      signal_work);
	unsigned long irqflags;

	if (!lock_task_sighand(bts->task, &irqflags))
		return;
	/* Serialization rule 4. */
	if (!bts->orphan && !WARN_ON_ONCE(!bts->sigq)) {
		ptrace_bts_note_delivered(bts);
		if (owned_sigqueue_send(bts->sigq, bts->task, bts->signal))
			bts->sent = bts->signal;
	}
	unlock_task_sighand(bts->task, &irqflags);
}

/* Called by the arbiter in hard interrupt context. */
static void ptrace_bts_overflow(struct ds_tracer *tracer, void *data)
{
	struct ptrace_bts *bts = data;

	irq_work_queue(&bts->signal_work);
}

/*
 * The records a lossless buffer of @nr records (the arbiter's part) keeps
 * free when the overflow signal is sent, for what is stored before the
 * signal stops the tracee: the records the hardware writes before its
 * interrupt is taken, the entries into the interrupts that send the
 * signal (one for the overflow, one or two self-IPIs for the irq_works),
 * the switch records.  An eighth, from 8 to 256 records; a lossless
 * buffer has at least 16 (PTRACE_BTS_LOSSLESS_MIN_SIZE).
 */
static size_t ptrace_bts_reserve(size_t nr)
{
	return clamp_t(size_t, nr / 8, 8, 256);
}

/*
 * Make the arbiter's tracer for recording into @buf of @nr records as
 * @flags say (branches, switch records, a callback when full or, with
 * %PTRACE_BTS_O_LOSSLESS, a reserve before), replacing @bts->tracer in
 * one step if there is one.  Nothing changes on an error.
 *
 * Return: the new tracer, %NULL if @flags record nothing, or an ERR_PTR().
 */
static struct ds_tracer *ptrace_bts_recorder(struct ptrace_bts *bts,
					     struct ds_bts_record *buf,
					     size_t nr, u32 flags)
{
	struct ds_config cfg = {
		.base	= buf,
		.size	= nr * sizeof(*buf),
		.data	= bts,
	};

	if (!(flags & (PTRACE_BTS_O_TRACE | PTRACE_BTS_O_SCHED)))
		return NULL;
	/* User branches only: a debugger never sees the kernel's. */
	if (flags & PTRACE_BTS_O_TRACE)
		cfg.flags |= DS_TRACE_USER;
	if (flags & PTRACE_BTS_O_SCHED)
		cfg.flags |= DS_TIMESTAMPS;
	if (flags & PTRACE_BTS_O_SIGNAL)
		cfg.overflow = ptrace_bts_overflow;
	if (flags & PTRACE_BTS_O_LOSSLESS) {
		/* The last slot is for the BTS_LOST record. */
		cfg.size -= sizeof(*buf);
		cfg.threshold = ptrace_bts_reserve(nr - 1);
	}

	if (bts->tracer)
		return ds_replace(bts->tracer, &cfg);
	return ds_request_bts(bts->task, -1, &cfg);
}

/*
 * Put @recs[0, @count), oldest first, into the buffer, which @bts->tracer
 * (if any) has just started to record into from its beginning.
 */
static void ptrace_bts_fill(struct ptrace_bts *bts,
			    const struct ds_bts_record *recs, size_t count)
{
	memset(bts->buf, 0, bts->nr * sizeof(*bts->buf));
	if (bts->tracer) {
		bts->count = 0;
		if (count)
			WARN_ON_ONCE(ds_write(bts->tracer, recs,
					      count * sizeof(*recs)) < 0);
	} else {
		memcpy(bts->buf, recs, count * sizeof(*recs));
		bts->count = count;
	}
}

/*
 * Stop recording.  The records are in the buffer but not where
 * ptrace_bts_span() finds them: take a ptrace_bts_snapshot() first.
 */
static void ptrace_bts_stop(struct ptrace_bts *bts)
{
	if (!bts->tracer)
		return;
	WARN_ON_ONCE(ds_release(bts->tracer));
	/* ds_release() waited for the callback; serialization rule 5. */
	irq_work_sync(&bts->signal_work);
	bts->tracer = NULL;
	bts->count = 0;
}

/*
 * Take back an overflow signal the tracee has not dequeued yet: the buffer
 * it was about is emptied or configured anew.  A trace whose link is gone
 * sends none and took its own back, see ptrace_bts_unlink().
 */
static void __ptrace_bts_take_back(struct ptrace_bts *bts)
{
	lockdep_assert_held(&bts->task->sighand->siglock);

	if (bts->sigq && owned_sigqueue_discard(bts->sigq, bts->task))
		bts->sent = 0;
	ptrace_bts_note_delivered(bts);
}

static void ptrace_bts_take_back(struct ptrace_bts *bts)
{
	unsigned long irqflags;

	if (!(bts->flags & PTRACE_BTS_O_SIGNAL))
		return;
	/* One on its way is sent first. */
	irq_work_sync(&bts->signal_work);
	if (!lock_task_sighand(bts->task, &irqflags))
		return;
	__ptrace_bts_take_back(bts);
	unlock_task_sighand(bts->task, &irqflags);
}

/* Stop recording and take back the signal of the last overflow. */
static void ptrace_bts_silence(struct ptrace_bts *bts)
{
	ptrace_bts_stop(bts);
	ptrace_bts_take_back(bts);
}

/*
 * Empty the buffer.  A circular one is zeroed, see ptrace_bts_span(); a
 * linear one, whose records end at the write index, need not be, and a
 * DRAIN of it costs the copy alone.
 */
static void ptrace_bts_empty(struct ptrace_bts *bts)
{
	/* Serialization rule 1: the tracee records nothing meanwhile. */
	if (bts->tracer) {
		/*
		 * Both re-arm the overflow callback and take back a call not
		 * made yet; one made before is taken back below.
		 */
		if (bts->flags & PTRACE_BTS_O_SIGNAL)
			WARN_ON_ONCE(ds_reset(bts->tracer));
		else
			WARN_ON_ONCE(ds_clear(bts->tracer));
	} else {
		memset(bts->buf, 0, bts->count * sizeof(*bts->buf));
		bts->count = 0;
	}
	bts->lost = 0;
	ptrace_bts_take_back(bts);
}

/* The records, oldest first, in a new array; %NULL if there are none. */
static struct ds_bts_record *ptrace_bts_snapshot(struct ptrace_bts *bts,
						 size_t *count)
{
	struct ds_bts_record *snap;
	size_t first, n, head;

	ptrace_bts_span(bts, &first, &n);
	*count = n;
	if (!n)
		return NULL;

	snap = kvmalloc_array(n, sizeof(*snap), GFP_KERNEL | __GFP_NOWARN);
	if (!snap)
		return ERR_PTR(-ENOMEM);
	head = min(n, bts->nr - first);
	memcpy(snap, &bts->buf[first], head * sizeof(*snap));
	memcpy(snap + head, bts->buf, (n - head) * sizeof(*snap));
	return snap;
}

/**
 * ptrace_bts_alloc() - a new trace of @task, with nothing configured
 * @task: the tracee
 *
 * Context: process context, may sleep.
 * Return: the trace, %NULL without memory.
 */
VISIBLE_IF_KUNIT struct ptrace_bts *ptrace_bts_alloc(struct task_struct *task)
{
	struct ptrace_bts *bts;

	bts = kzalloc(sizeof(*bts), GFP_KERNEL_ACCOUNT);
	if (!bts)
		return NULL;
	bts->task = get_task_struct(task);
	init_irq_work(&bts->signal_work, ptrace_bts_signal);
	return bts;
}

/* Stop recording and free everything; @bts is no task's any more. */
static void ptrace_bts_free(struct ptrace_bts *bts)
{
	ptrace_bts_stop(bts);
	vfree(bts->buf);
	ptrace_bts_uncharge(bts->ucounts, bts->pages);
	owned_sigqueue_free(bts->sigq, bts->task);
	put_task_struct(bts->task);
	kfree(bts);
}

/*
 * Orphans.
 *
 * A trace whose ptrace link went (ptrace_bts_unlink()) cannot be freed
 * there: giving back its BTS sleeps.  It waits in ptrace_bts_orphans, in
 * the order the links went, for the reaper.  A CONFIG that failed for
 * want of what some orphans hold does not wait for the others: it frees
 * those itself, see ptrace_bts_apply_after_orphans().
 *
 * An orphan is taken off the list and freed by the holder of the
 * orphanage's reap_mutex, one per hold, so a CONFIG waits for the one
 * being freed, if any, by taking the mutex.  @made numbers the orphans;
 * @freed counts those freed, so that a CONFIG can tell whether one went
 * between its try and its look at the list.  The list and the numbers are
 * under the orphanage's lock, which ptrace_bts_unlink() takes inside
 * siglock; @freed is also read without it, with acquire: it is released
 * once everything the freed orphan held was given back.
 */
VISIBLE_IF_KUNIT void ptrace_bts_reap(struct work_struct *work);

static struct ptrace_bts_orphanage ptrace_bts_orphans = {
	.reap_mutex = __MUTEX_INITIALIZER(ptrace_bts_orphans.reap_mutex),
	.lock = __SPIN_LOCK_UNLOCKED(ptrace_bts_orphans.lock),
	.list = LIST_HEAD_INIT(ptrace_bts_orphans.list),
	.reaper = __WORK_INITIALIZER(ptrace_bts_orphans.reaper,
				     ptrace_bts_reap),
};

/**
 * ptrace_bts_charge_root() - the user of the initial namespace a charge
 *	goes up to
 * @ucounts: the user charged
 *
 * A charge counts against every user from @ucounts up through the owners
 * of its user namespaces (inc_rlimit_ucounts()).  Those users form a tree
 * whose roots are the users of the initial namespace, so two charges meet
 * at some user if, and only if, they go up to the same root.
 *
 * Return: that root.
 */
VISIBLE_IF_KUNIT const struct ucounts *
ptrace_bts_charge_root(struct ucounts *ucounts)
{
	while (ucounts->ns->ucounts)
		ucounts = ucounts->ns->ucounts;
	return ucounts;
}

/**
 * ptrace_bts_adopt() - put a trace whose link is gone in an orphanage
 * @o: the orphanage
 * @bts: the trace, no task's any more
 *
 * The caller schedules the reaper.
 *
 * Context: any; takes @o's lock.
 */
VISIBLE_IF_KUNIT void ptrace_bts_adopt(struct ptrace_bts_orphanage *o,
				       struct ptrace_bts *bts)
{
	unsigned long flags;

	/* @ucounts pins the user namespaces up to the root while @bts lives. */
	if (bts->ucounts)
		bts->charge_root = ptrace_bts_charge_root(bts->ucounts);
	spin_lock_irqsave(&o->lock, flags);
	bts->orphan_seq = ++o->made;
	list_add_tail(&bts->orphan_node, &o->list);
	spin_unlock_irqrestore(&o->lock, flags);
}

/* Whether orphan @bts holds what a CONFIG of @child wants, see above. */
static bool ptrace_bts_orphan_in_the_way(const struct ptrace_bts *bts,
					 const struct task_struct *child,
					 enum ptrace_bts_want want,
					 const struct ucounts *root)
{
	switch (want) {
	case PTRACE_BTS_WANT_BTS:
		return bts->task == child;
	case PTRACE_BTS_WANT_USER:
		return bts->charge_root && bts->charge_root == root;
	case PTRACE_BTS_WANT_ANY:
		return true;
	case PTRACE_BTS_WANT_NOTHING:
		break;
	}
	return false;
}

/*
 * Take off @o's list the first orphan made up to number @last that is in
 * the way (see above), for the caller to free.
 */
static struct ptrace_bts *
ptrace_bts_take_orphan(struct ptrace_bts_orphanage *o,
		       const struct task_struct *child,
		       enum ptrace_bts_want want, const struct ucounts *root,
		       u64 last)
{
	struct ptrace_bts *bts, *found = NULL;

	lockdep_assert_held(&o->reap_mutex);

	spin_lock_irq(&o->lock);
	list_for_each_entry(bts, &o->list, orphan_node) {
		if (bts->orphan_seq > last)
			break;
		if (ptrace_bts_orphan_in_the_way(bts, child, want, root)) {
			found = bts;
			list_del(&bts->orphan_node);
			break;
		}
	}
	spin_unlock_irq(&o->lock);
	return found;
}

/* Free @bts, which the caller took off @o's list. */
static void ptrace_bts_free_orphan(struct ptrace_bts_orphanage *o,
				   struct ptrace_bts *bts)
{
	lockdep_assert_held(&o->reap_mutex);

	ptrace_bts_free(bts);
	spin_lock_irq(&o->lock);
	/* Pairs with the acquire in ptrace_bts_apply_after_orphans(). */
	smp_store_release(&o->freed, o->freed + 1);
	spin_unlock_irq(&o->lock);
}

/**
 * ptrace_bts_reap() - free every orphan of an orphanage, oldest first
 * @work: the orphanage's reaper
 *
 * Context: process context, may sleep; takes the orphanage's reap_mutex.
 */
VISIBLE_IF_KUNIT void ptrace_bts_reap(struct work_struct *work)
{
	struct ptrace_bts_orphanage *o =
		container_of(work, struct ptrace_bts_orphanage, reaper);
	struct ptrace_bts *bts;

	do {
		mutex_lock(&o->reap_mutex);
		bts = ptrace_bts_take_orphan(o, NULL, PTRACE_BTS_WANT_ANY, NULL,
					     U64_MAX);
		if (bts)
			ptrace_bts_free_orphan(o, bts);
		mutex_unlock(&o->reap_mutex);
	} while (bts);
}

/**
 * ptrace_bts_free_orphan_in_the_way() - free one orphan a CONFIG wants gone
 * @o: the orphanage
 * @child: the tracee of the CONFIG
 * @want: what the CONFIG failed for want of
 * @root: the root of the CONFIG's user, see ptrace_bts_charge_root()
 * @seen: what the CONFIG knew before it tried
 *
 * Frees the oldest orphan in the way of a CONFIG of @child that failed
 * for want of @want, among those made before the CONFIG first tried;
 * else tells whether an orphan went since @seen, waiting for the one
 * being freed if any.
 *
 * Context: process context, may sleep; takes @o's reap_mutex, killably.
 * Return: what it did; %PTRACE_BTS_FREED_NOTHING if the caller was killed.
 */
VISIBLE_IF_KUNIT enum ptrace_bts_freed
ptrace_bts_free_orphan_in_the_way(struct ptrace_bts_orphanage *o,
				  const struct task_struct *child,
				  enum ptrace_bts_want want,
				  const struct ucounts *root,
				  const struct ptrace_bts_orphans_seen *seen)
{
	struct ptrace_bts *bts;
	bool moved;

	/* A tracer being killed need not know; its tracee waits for it. */
	if (mutex_lock_killable(&o->reap_mutex))
		return PTRACE_BTS_FREED_NOTHING;
	/* None is being freed: the mutex is ours. */
	spin_lock_irq(&o->lock);
	moved = o->freed != seen->freed;
	spin_unlock_irq(&o->lock);
	bts = ptrace_bts_take_orphan(o, child, want, root, seen->last);
	if (bts)
		ptrace_bts_free_orphan(o, bts);
	mutex_unlock(&o->reap_mutex);

	if (bts)
		return PTRACE_BTS_FREED_IN_THE_WAY;
	return moved ? PTRACE_BTS_FREED_ELSEWHERE : PTRACE_BTS_FREED_NOTHING;
}

/*
 * PTRACE_BTS_CONFIG.
 *
 * A configuration is made in two steps.  ptrace_bts_prepare() gets all it
 * needs (the structure, a new buffer and its charge, a copy of the records
 * there are) and may fail: then nothing changed.  ptrace_bts_commit()
 * swaps the recording; it can fail only in the arbiter (out of memory
 * for its tracer, or perf holding BTS when switch records alone become
 * branches), and then too nothing changed: ds_replace() lets go of the
 * old tracer only once the new one has everything.
 */

/**
 * struct ptrace_bts_prep - what a configuration needs before it changes
 *	anything
 * @buf: with %PTRACE_BTS_O_ALLOC, the new buffer; after a
 *	ptrace_bts_commit() that succeeded, the buffer it replaced
 * @nr: the capacity of @buf in records
 * @ucounts: the user charged for @pages, as in &struct ptrace_bts
 * @pages: the pages charged for @buf
 * @snap: the records there are, oldest first, to take back or keep
 * @count: the number of records in @snap
 * @lost: the records dropped since the buffer was last emptied
 * @sigq: the overflow signal's sigqueue, when %PTRACE_BTS_O_SIGNAL is asked
 *	for the first time; the trace keeps it once the configuration holds
 * @charged: the tracer's user was charged for @buf, or would have been
 *	but for its RLIMIT_MEMLOCK
 */
struct ptrace_bts_prep {
	struct ds_bts_record *buf;
	size_t nr;
	struct ucounts *ucounts;
	unsigned long pages;
	struct ds_bts_record *snap;
	size_t count;
	u64 lost;
	struct sigqueue *sigq;
	bool charged;
};

/* Free what ptrace_bts_prepare() got for @bts and nothing uses. */
static void ptrace_bts_discard(struct ptrace_bts *bts,
			       struct ptrace_bts_prep *prep)
{
	kvfree(prep->snap);
	vfree(prep->buf);
	ptrace_bts_uncharge(prep->ucounts, prep->pages);
	owned_sigqueue_free(prep->sigq, bts->task);
}

/* A tracee stopped at PTRACE_EVENT_EXIT, or later, is on its way out. */
static bool ptrace_bts_exiting(struct task_struct *child)
{
	const int code = SIGTRAP | (PTRACE_EVENT_EXIT << 8);
	unsigned long irqflags;
	bool exiting = true;

	/*
	 * The stop's siginfo, as PTRACE_GETSIGINFO reads it: ->exit_code
	 * no longer says, wait(2) cleared it.
	 */
	if (lock_task_sighand(child, &irqflags)) {
		exiting = child->last_siginfo &&
			  child->last_siginfo->si_signo == SIGTRAP &&
			  child->last_siginfo->si_code == code;
		unlock_task_sighand(child, &irqflags);
	}
	return exiting || (child->flags & PF_EXITING);
}

/*
 * Hardware branch tracing takes BTS from perf and keeps LBR users off every
 * cpu (x86_add_exclusive()): allowed when perf_event_open() would let the
 * tracer open a user-mode branch event on the tracee, whose samples carry
 * the same branches.
 */
static int ptrace_bts_may_use_pmu(void)
{
	if (perf_paranoid_any() && !capable(CAP_SYS_ADMIN))
		return -EACCES;
	return security_perf_event_open(PERF_SECURITY_OPEN);
}

static int ptrace_bts_check_config(struct task_struct *child,
				   struct ptrace_bts *bts,
				   const struct ptrace_bts_config *cfg)
{
	u32 recording = cfg->flags & ~PTRACE_BTS_O_ALLOC;

	if (cfg->flags & ~PTRACE_BTS_O_ALL)
		return -EINVAL;
	if (cfg->bts_size && cfg->bts_size != sizeof(struct bts_struct))
		return -EINVAL;
	/*
	 * @lost is PTRACE_BTS_STATUS's output, ignored here as @size and
	 * @bts_size may be: a tracer can pass back what STATUS gave it.
	 */
	if (cfg->flags & PTRACE_BTS_O_LOSSLESS) {
		u32 size = (cfg->flags & PTRACE_BTS_O_ALLOC) ? cfg->size :
			   bts ? bts->size : 0;

		/* A signal to stop at, and room for the reserve and BTS_LOST. */
		if (!(cfg->flags & PTRACE_BTS_O_SIGNAL) ||
		    size < PTRACE_BTS_LOSSLESS_MIN_SIZE)
			return -EINVAL;
	}

	if (cfg->flags & PTRACE_BTS_O_SIGNAL) {
		/* The tracer is to see a signal-delivery-stop. */
		if (!valid_signal(cfg->signal) || !cfg->signal ||
		    sig_kernel_only(cfg->signal))
			return -EINVAL;
	} else if (cfg->signal) {
		return -EINVAL;
	}

	if (cfg->flags & PTRACE_BTS_O_ALLOC) {
		if (cfg->size % sizeof(struct bts_struct) ||
		    cfg->size > PTRACE_BTS_SIZE_MAX)
			return -EINVAL;
		/* Size 0 frees the buffer: nothing to record into. */
		if (!cfg->size && recording)
			return -EINVAL;
	} else {
		if (cfg->size && cfg->size != (bts ? bts->size : 0))
			return -EINVAL;
		if (recording && !bts)
			return -EINVAL;
	}

	if (cfg->flags & PTRACE_BTS_O_TRACE) {
		int err;

		if (ds_record_size(DS_BTS) == -EOPNOTSUPP)
			return -EOPNOTSUPP;
		err = ptrace_bts_may_use_pmu();
		if (err)
			return err;
	}
	/* Nothing starts to record a task that will not run again. */
	if ((recording & (PTRACE_BTS_O_TRACE | PTRACE_BTS_O_SCHED)) &&
	    ptrace_bts_exiting(child))
		return -ESRCH;
	return 0;
}

/* The structure, of a size clone3(2) and openat2(2) would accept. */
static int ptrace_bts_copy_config(struct ptrace_bts_config *cfg,
				  const void __user *ucfg, unsigned long usize)
{
	if (usize < PTRACE_BTS_CONFIG_SIZE_VER0)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	return copy_struct_from_user(cfg, sizeof(*cfg), ucfg, usize);
}

static int ptrace_bts_prepare(struct ptrace_bts *bts,
			      const struct ptrace_bts_config *cfg,
			      struct ptrace_bts_prep *prep)
{
	struct ucounts *ucounts;

	/* Kept once made, unused until a configuration sends it. */
	if ((cfg->flags & PTRACE_BTS_O_SIGNAL) && !bts->sigq) {
		prep->sigq = owned_sigqueue_alloc(bts->task);
		if (!prep->sigq)
			return -ENOMEM;
		/* The overflow signal's identity, see the uapi header. */
		prep->sigq->info.si_errno = PTRACE_BTS_SI_ERRNO;
	}

	if (cfg->flags & PTRACE_BTS_O_ALLOC) {
		prep->nr = cfg->size / sizeof(struct bts_struct);
		prep->pages = ptrace_bts_pages(prep->nr);
		ucounts = ptrace_bts_charge(prep->pages);
		prep->charged = ucounts && ucounts != ERR_PTR(-EPERM);
		if (IS_ERR(ucounts))
			return PTR_ERR(ucounts);
		prep->ucounts = ucounts;
		/*
		 * The tracer chose the size: a failure is its ENOMEM, not a
		 * splat, and not its memory cgroup's OOM killer either.
		 */
		prep->buf = __vmalloc(prep->pages << PAGE_SHIFT,
				      GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL |
				      __GFP_NOWARN);
		if (!prep->buf)
			return -ENOMEM;
	}

	/* A new buffer starts empty: the records are kept only in the old. */
	if (cfg->flags & PTRACE_BTS_O_ALLOC)
		return 0;
	prep->lost = ptrace_bts_lost(bts);
	prep->snap = ptrace_bts_snapshot(bts, &prep->count);
	if (IS_ERR(prep->snap)) {
		int err = PTR_ERR(prep->snap);

		prep->snap = NULL;
		return err;
	}
	return 0;
}

/*
 * Replace the recording of @bts by what @cfg asks, with what @prep holds;
 * see above.  Afterwards @prep holds what is no longer used.
 */
static int ptrace_bts_commit(struct ptrace_bts *bts,
			     const struct ptrace_bts_config *cfg,
			     struct ptrace_bts_prep *prep)
{
	u32 flags = cfg->flags & ~PTRACE_BTS_O_ALLOC;
	struct ds_bts_record *buf = prep->buf ? prep->buf : bts->buf;
	size_t nr = prep->buf ? prep->nr : bts->nr;
	struct ds_tracer *tracer;

	/*
	 * The first sigqueue is in place before the new tracer can call
	 * back; the old tracer had no O_SIGNAL and does not use it.
	 */
	if (prep->sigq)
		bts->sigq = prep->sigq;
	/* A tracee is never left without the recording it had. */
	tracer = ptrace_bts_recorder(bts, buf, nr, flags);
	if (IS_ERR(tracer)) {
		if (prep->sigq)
			bts->sigq = NULL;
		return PTR_ERR(tracer);
	}
	prep->sigq = NULL;
	if (!tracer && bts->tracer)
		WARN_ON_ONCE(ds_release(bts->tracer));
	/* The old tracer's callback is done: serialization rule 5. */
	bts->tracer = tracer;
	/* A signal about the old buffer is stale. */
	ptrace_bts_take_back(bts);
	bts->signal = cfg->signal;
	bts->flags = flags;

	swap(bts->buf, buf);
	bts->nr = nr;
	if (prep->buf) {
		/* A new buffer starts empty; the old one and its charge go. */
		ptrace_bts_fill(bts, NULL, 0);
		bts->lost = 0;
		prep->buf = buf;
		swap(bts->ucounts, prep->ucounts);
		swap(bts->pages, prep->pages);
		bts->size = cfg->size;
	} else {
		size_t count = prep->count;

		/* A circular buffer loses nothing; a linear one counts on. */
		bts->lost = (flags & PTRACE_BTS_O_SIGNAL) ? prep->lost : 0;
		/* A lossless buffer keeps its last slot for BTS_LOST. */
		if ((flags & PTRACE_BTS_O_LOSSLESS) && count > nr - 1) {
			bts->lost += count - (nr - 1);
			count = nr - 1;
		}
		ptrace_bts_fill(bts, prep->snap, count);
	}
	return 0;
}

/*
 * Make @bts record as @cfg asks, or leave it as it was and say in @want
 * which orphans might have been holding what it needed.
 */
static int ptrace_bts_apply(struct ptrace_bts *bts,
			    const struct ptrace_bts_config *cfg,
			    enum ptrace_bts_want *want)
{
	struct ptrace_bts_prep prep = { };
	int err;

	err = ptrace_bts_prepare(bts, cfg, &prep);
	if (!err)
		err = ptrace_bts_commit(bts, cfg, &prep);
	ptrace_bts_discard(bts, &prep);

	if (err == -EBUSY)
		*want = PTRACE_BTS_WANT_BTS;
	else if (err == -ENOMEM && prep.charged)
		*want = PTRACE_BTS_WANT_USER;
	else
		*want = PTRACE_BTS_WANT_NOTHING;
	return err;
}

/*
 * Apply @cfg to @bts of @child.  A tracer that went away without
 * detaching left its traces to the reaper, which gives back their BTS and
 * charges a little later.  A CONFIG that fails for want of what such
 * orphans hold frees them, one at a time, trying again after each, until
 * it succeeds or none made before it first tried is in its way; it waits
 * for an orphan of someone else's only while that one is being freed,
 * once for each want.  Freeing the user's orphans may make it fail for
 * its tracee's BTS next.
 */
static int ptrace_bts_apply_after_orphans(struct task_struct *child,
					  struct ptrace_bts *bts,
					  const struct ptrace_bts_config *cfg)
{
	const struct ucounts *root = ptrace_bts_charge_root(current_ucounts());
	struct ptrace_bts_orphanage *o = &ptrace_bts_orphans;
	struct ptrace_bts_orphans_seen seen;
	unsigned int elsewhere = 0;
	enum ptrace_bts_want want;
	int err;

	spin_lock_irq(&o->lock);
	seen.last = o->made;
	spin_unlock_irq(&o->lock);
	for (;;) {
		/* Pairs with the release in ptrace_bts_free_orphan(). */
		seen.freed = smp_load_acquire(&o->freed);
		err = ptrace_bts_apply(bts, cfg, &want);
		if (!want || fatal_signal_pending(current))
			return err;
		switch (ptrace_bts_free_orphan_in_the_way(o, child, want, root,
							  &seen)) {
		case PTRACE_BTS_FREED_NOTHING:
			return err;
		case PTRACE_BTS_FREED_ELSEWHERE:
			if (elsewhere & want)
				return err;
			elsewhere |= want;
			break;
		case PTRACE_BTS_FREED_IN_THE_WAY:
			break;
		}
		cond_resched();
	}
}

static int ptrace_bts_config(struct task_struct *child,
			     const void __user *ucfg, unsigned long usize)
{
	struct ptrace_bts *bts = child->thread.ptrace_bts;
	struct ptrace_bts_config cfg;
	bool fresh = false;
	int err;

	err = ptrace_bts_copy_config(&cfg, ucfg, usize);
	if (err)
		return err;
	err = ptrace_bts_check_config(child, bts, &cfg);
	if (err)
		return err;

	if ((cfg.flags & PTRACE_BTS_O_ALLOC) && !cfg.size) {
		/* Size 0: everything goes. */
		if (bts) {
			WRITE_ONCE(child->thread.ptrace_bts, NULL);
			ptrace_bts_silence(bts);
			ptrace_bts_free(bts);
		}
		return 0;
	}
	/* Nothing configured and nothing asked for. */
	if (!bts && !(cfg.flags & PTRACE_BTS_O_ALLOC))
		return 0;

	if (!bts) {
		bts = ptrace_bts_alloc(child);
		if (!bts)
			return -ENOMEM;
		fresh = true;
	}
	err = ptrace_bts_apply_after_orphans(child, bts, &cfg);

	if (fresh) {
		/* A new trace exists once it has a buffer. */
		if (err)
			ptrace_bts_free(bts);
		else
			WRITE_ONCE(child->thread.ptrace_bts, bts);
	}
	return err;
}

/*
 * The other requests.
 */

static int ptrace_bts_status(struct ptrace_bts *bts, void __user *ucfg,
			     unsigned long usize)
{
	struct ptrace_bts_config cfg = {
		.bts_size = sizeof(struct bts_struct),
	};
	size_t known = min_t(size_t, usize, sizeof(cfg));

	if (usize < PTRACE_BTS_CONFIG_SIZE_VER0)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	if (bts) {
		cfg.size = bts->size;
		cfg.flags = bts->flags;
		cfg.signal = bts->signal;
		cfg.lost = ptrace_bts_lost(bts);
	}
	/* A tracer of the first version gets the fields it knows. */
	if (copy_to_user(ucfg, &cfg, known))
		return -EFAULT;
	/* As copy_struct_to_user(): what this kernel does not know is 0. */
	if (clear_user(ucfg + known, usize - known))
		return -EFAULT;
	return 0;
}

static int ptrace_bts_get(struct ptrace_bts *bts, void __user *urec,
			  unsigned long index)
{
	struct bts_struct rec;
	size_t first, count;

	if (!bts)
		return -EINVAL;
	ptrace_bts_span(bts, &first, &count);
	/* 0 is the newest: the BTS_LOST record if there is one. */
	if (ptrace_bts_has_lost_record(bts)) {
		if (!index) {
			ptrace_bts_lost_record(bts, ptrace_bts_pid(bts), &rec);
			goto out;
		}
		index--;
	}
	if (index >= count)
		return -EINVAL;

	ptrace_bts_translate(ptrace_bts_at(bts, first, count - 1 - index),
			     ptrace_bts_pid(bts), &rec);
out:
	return copy_to_user(urec, &rec, sizeof(rec)) ? -EFAULT : 0;
}

static long ptrace_bts_drain(struct ptrace_bts *bts, void __user *urecs,
			     unsigned long usize)
{
	struct bts_struct chunk[PTRACE_BTS_CHUNK];
	struct bts_struct __user *out = urecs;
	size_t first, count, i, n, j;
	bool lost_record;
	u32 pid;

	if (!bts)
		return 0;
	ptrace_bts_span(bts, &first, &count);
	lost_record = ptrace_bts_has_lost_record(bts);
	if (!count && !lost_record)
		return 0;
	if (usize / sizeof(*out) < count + lost_record)
		return -EIO;

	pid = ptrace_bts_pid(bts);
	for (i = 0; i < count; i += n) {
		n = min_t(size_t, count - i, PTRACE_BTS_CHUNK);
		for (j = 0; j < n; j++)
			ptrace_bts_translate(ptrace_bts_at(bts, first, i + j),
					     pid, &chunk[j]);
		if (copy_to_user(out + i, chunk, n * sizeof(*chunk)))
			return -EFAULT;
		/* A tracer being killed stops here; the records stay. */
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	if (lost_record) {
		ptrace_bts_lost_record(bts, pid, &chunk[0]);
		if (copy_to_user(out + count, chunk, sizeof(*chunk)))
			return -EFAULT;
	}
	ptrace_bts_empty(bts);
	return count + lost_record;
}

/**
 * ptrace_bts_request() - serve a PTRACE_BTS_* request
 * @child: the tracee, attached to current and stopped
 * @request: %PTRACE_BTS_CONFIG ... %PTRACE_BTS_DRAIN
 * @addr: the request's address argument (a user pointer or 0)
 * @data: the request's data argument (a size, an index or 0)
 *
 * Called by arch_ptrace() and compat_arch_ptrace() after ptrace_check_attach()
 * succeeded: @child is frozen in a ptrace stop until this returns.  32-bit
 * tracers pass the same arguments zero-extended; the structures have one
 * layout for all.  The trace there is, if any, was configured by current
 * through this very ptrace link: ptrace_bts_unlink() takes a trace away
 * with the link it was made for.
 *
 * Context: process context, may sleep.
 * Return: as documented for each request in
 * Documentation/arch/x86/ptrace-bts.rst: 0, a number of records, or -errno.
 */
long ptrace_bts_request(struct task_struct *child, long request,
			unsigned long addr, unsigned long data)
{
	void __user *uaddr = (void __user *)addr;
	struct ptrace_bts *bts;
	long ret;

	/* Serialization rule 1. */
	ptrace_bts_assert_frozen(child);
	bts = child->thread.ptrace_bts;

	switch (request) {
	case PTRACE_BTS_CONFIG:
		ret = ptrace_bts_config(child, uaddr, data);
		break;
	case PTRACE_BTS_STATUS:
		ret = ptrace_bts_status(bts, uaddr, data);
		break;
	case PTRACE_BTS_SIZE:
		ret = -EINVAL;
		if (addr || data)
			break;
		ret = bts ? ptrace_bts_count(bts) : 0;
		break;
	case PTRACE_BTS_GET:
		ret = ptrace_bts_get(bts, uaddr, data);
		break;
	case PTRACE_BTS_CLEAR:
		ret = -EINVAL;
		if (addr || data)
			break;
		if (bts)
			ptrace_bts_empty(bts);
		ret = 0;
		break;
	case PTRACE_BTS_DRAIN:
		ret = ptrace_bts_drain(bts, uaddr, data);
		break;
	default:
		ret = -EIO;
		break;
	}
	return ret;
}

/**
 * ptrace_bts_release() - drop a tracee's branch trace
 * @child: the tracee being detached, or the current task exiting
 *
 * Called by ptrace_disable() when the tracer detaches and by exit_thread()
 * when the tracee exits: recording stops, an overflow signal not yet
 * dequeued is taken back, the buffer is freed and its pages are given back
 * to the tracer's user.  Tasks that were never traced return at once.
 *
 * Context: process context, may sleep.
 */
void ptrace_bts_release(struct task_struct *child)
{
	struct ptrace_bts *bts;

	if (!READ_ONCE(child->thread.ptrace_bts))
		return;
	/* Serialization rule 2. */
	bts = xchg(&child->thread.ptrace_bts, NULL);
	if (!bts)
		return;
	/* A detached tracee gets no signal from its buffer. */
	ptrace_bts_silence(bts);
	ptrace_bts_free(bts);
}

/*
 * @child may be in the signal-delivery-stop of its overflow signal, the
 * signal dequeued and waiting for the tracer's verdict.  Without a tracer
 * the verdict would be the signal itself, delivered as the tracee resumes
 * (ptrace_signal()); cancel it as the tracer would.  The stop is taken
 * for ours if our signal left the queue before any take-back (@delivered)
 * and the stop is for that signal with our siginfo (SI_KERNEL and
 * PTRACE_BTS_SI_ERRNO): only an instance a thread of the tracee's process
 * queued with the same siginfo cannot be told from it.  A stop whose
 * siginfo the tracer replaced (PTRACE_SETSIGINFO) is left alone, and so is
 * one the tracer reaped (wait(2) cleared ->exit_code) or resumed.
 */
static void ptrace_bts_cancel_stop_signal(struct task_struct *child,
					  struct ptrace_bts *bts)
{
	const kernel_siginfo_t *info = child->last_siginfo;

	lockdep_assert_held(&child->sighand->siglock);

	/*
	 * Still in the stop with no verdict (ptrace_resume() clears
	 * JOBCTL_TRACED as it sets ->exit_code), and ours was dequeued: it
	 * leaves the pending list only under siglock, which we hold.
	 */
	ptrace_bts_note_delivered(bts);
	if (!bts->delivered || !info || child->exit_state ||
	    !(child->jobctl & JOBCTL_TRACED))
		return;
	if (info->si_signo == bts->delivered && info->si_code == SI_KERNEL &&
	    info->si_errno == PTRACE_BTS_SI_ERRNO &&
	    child->exit_code == bts->delivered)
		child->exit_code = 0;
}

/**
 * ptrace_bts_unlink() - the ptrace link of a tracee goes away
 * @child: the tracee
 *
 * Called by __ptrace_unlink() on every way a link ends: the tracer
 * detaches (which has released the trace already, see
 * ptrace_bts_release()), the tracer exits without detaching
 * (exit_ptrace()), a dead tracee is released.  The trace was made for this
 * link and goes with it: from now on it sends no signal, the one it sent
 * and the tracee has not acted on is taken back (pending, or the verdict
 * of a signal-delivery-stop the tracer did not reap), and the reaper stops
 * the recording and frees the buffer and its charge soon, in process
 * context.  A later tracer finds nothing; a PTRACE_BTS_CONFIG that needs
 * what the trace holds before the reaper got to it frees it.
 *
 * Context: tasklist_lock held for writing and @child's siglock held;
 * interrupts disabled (except on PREEMPT_RT).  Does not sleep.
 */
void ptrace_bts_unlink(struct task_struct *child)
{
	struct ptrace_bts *bts;

	lockdep_assert_held_write(&tasklist_lock);
	lockdep_assert_held(&child->sighand->siglock);

	if (!READ_ONCE(child->thread.ptrace_bts))
		return;
	/* Serialization rule 2. */
	bts = xchg(&child->thread.ptrace_bts, NULL);
	if (!bts)
		return;
	/* Serialization rule 4. */
	bts->orphan = true;
	ptrace_bts_cancel_stop_signal(child, bts);
	__ptrace_bts_take_back(bts);
	ptrace_bts_adopt(&ptrace_bts_orphans, bts);
	schedule_work(&ptrace_bts_orphans.reaper);
}

/**
 * ptrace_bts_fork() - a new task starts without a branch trace
 * @child: the copy of the parent, not yet running
 *
 * The copy of the parent's thread_struct points to the parent's trace;
 * a debugger that wants the child's asks for it.
 *
 * Context: any.
 */
void ptrace_bts_fork(struct task_struct *child)
{
	child->thread.ptrace_bts = NULL;
}
