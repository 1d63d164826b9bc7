// SPDX-License-Identifier: GPL-2.0
/*
 * Branch trace for debuggers: the PTRACE_BTS_* requests.
 *
 * A tracer gives its tracee a buffer and asks for its branches
 * (PTRACE_BTS_O_TRACE, the BTS hardware) and for records of its context
 * switches (PTRACE_BTS_O_SCHED, software), then reads them at a stop.  The
 * recording is done by the Debug Store arbiter (arch/x86/kernel/ds.c): this
 * file owns the buffer, charges it to the tracer's RLIMIT_MEMLOCK, turns
 * the arbiter's records into struct bts_struct and keeps kernel addresses
 * from the tracer.
 *
 * Every request comes from the tracer with the tracee stopped and frozen
 * (ptrace_check_attach()), so the tracee does not run, switch or exit while
 * one is served, and its records are in the buffer: the arbiter drains the
 * hardware into it when the tracee is switched out.
 *
 * See Documentation/arch/x86/ptrace-bts.rst.
 */

#include <linux/err.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/ptrace.h>
#include <linux/resource.h>
#include <linux/sched.h>
#include <linux/sched/jobctl.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include <asm/ds.h>
#include <asm/ptrace-bts.h>

#include "ptrace_bts.h"

/* One layout for every tracer: no implicit padding, no longs. */
static_assert(sizeof(struct ptrace_bts_config) == 16);
static_assert(sizeof(struct bts_struct) == 32);
static_assert(offsetof(struct bts_struct, from) == 8);
static_assert(offsetof(struct bts_struct, clock) == 24);
static_assert(sizeof(struct ds_bts_record) == DS_BTS_RECORD_SIZE);
static_assert(PTRACE_BTS_SIZE_MAX / sizeof(struct bts_struct) <= INT_MAX);

/* Records translated per copy to user space. */
#define PTRACE_BTS_CHUNK	(PAGE_SIZE / sizeof(struct bts_struct))

/**
 * struct ptrace_bts - the branch trace of one tracee
 * @task: the tracee; @task->thread.ptrace_bts points here until it exits
 * @owner: the tracer that configured it (a reference)
 * @mm: the tracer's mm, charged for @buf (a mmgrab() reference)
 * @pages: the pages charged to @mm->pinned_vm
 * @buf: the buffer, zeroed where no record is; %NULL if none
 * @nr: the capacity of @buf in records
 * @count: while @tracer is %NULL, the records in @buf[0, @count), oldest
 *	first; else the arbiter's write index says
 * @tracer: the arbiter's tracer while %PTRACE_BTS_O_TRACE or
 *	%PTRACE_BTS_O_SCHED is on
 * @size: the configured size (bytes of struct bts_struct)
 * @flags: the configured PTRACE_BTS_O_* flags, without %PTRACE_BTS_O_ALLOC
 * @signal: the configured overflow signal
 */
struct ptrace_bts {
	struct task_struct *task;
	struct pid *owner;
	struct mm_struct *mm;
	unsigned long pages;
	struct ds_bts_record *buf;
	size_t nr;
	size_t count;
	struct ds_tracer *tracer;
	u32 size;
	u32 flags;
	u32 signal;
};

/*
 * Serialization, without a lock of our own:
 *
 * 1. A task's thread.ptrace_bts, and the struct ptrace_bts it points to,
 *    are used by the task's tracer while the task is frozen in a ptrace
 *    stop (ptrace_check_attach() to ptrace_unfreeze_traced(): requests and
 *    ptrace_disable()), and by the task itself in exit_thread().  A frozen
 *    task does not run and an exiting one is not stopped, so they exclude
 *    each other, and only one tracer at a time has the task frozen.
 *    ptrace_bts_assert_owner() checks it where it is relied on.
 * 2. Hence no global lock: a tracer whose copy to user space faults slowly
 *    (userfaultfd) holds up no one but itself.
 * 3. The overflow callback reads @task and @signal from interrupt context:
 *    they do not change while @tracer exists, and ds_release() waits for
 *    the callback.
 */
static void ptrace_bts_assert_owner(struct task_struct *task)
{
	WARN_ON_ONCE(task != current &&
		     !(READ_ONCE(task->jobctl) & JOBCTL_PTRACE_FROZEN));
}

/*
 * Memory accounting: the buffer is pinned kernel memory the tracer asked
 * for, so it counts against the tracer's RLIMIT_MEMLOCK, like pinned user
 * pages (mm->pinned_vm), until the buffer is freed, whoever frees it.
 */
static int ptrace_bts_charge(struct mm_struct *mm, unsigned long pages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;

	if (capable(CAP_IPC_LOCK)) {
		atomic64_add(pages, &mm->pinned_vm);
		return 0;
	}
	/* As mlock(2): no allowance at all is a matter of privilege. */
	if (!limit)
		return -EPERM;
	if (atomic64_add_return(pages, &mm->pinned_vm) > limit) {
		atomic64_sub(pages, &mm->pinned_vm);
		return -ENOMEM;
	}
	return 0;
}

static void ptrace_bts_uncharge(struct mm_struct *mm, unsigned long pages)
{
	atomic64_sub(pages, &mm->pinned_vm);
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
static void ptrace_bts_translate(const struct ds_bts_record *raw, u32 pid,
				 struct bts_struct *out)
{
	memset(out, 0, sizeof(*out));

	if (raw->from == DS_BTS_ESCAPE) {
		switch (raw->to) {
		case DS_BTS_TASK_ARRIVES:
			out->qualifier = BTS_TASK_ARRIVES;
			break;
		case DS_BTS_TASK_DEPARTS:
			out->qualifier = BTS_TASK_DEPARTS;
			break;
		case DS_BTS_EXEC:
			out->qualifier = BTS_TASK_EXEC;
			break;
		default:
			return;
		}
		out->pid = pid;
		out->clock = raw->flags;
		return;
	}

	if (!raw->from || raw->from >= TASK_SIZE_MAX)
		return;
	out->qualifier = BTS_BRANCH;
	out->from = raw->from;
	out->to = raw->to < TASK_SIZE_MAX ? raw->to : 0;
}

/* The tracee's thread id as the tracer sees it. */
static u32 ptrace_bts_pid(struct ptrace_bts *bts)
{
	return task_pid_nr_ns(bts->task, task_active_pid_ns(current));
}

/* Empty the buffer; zeroed, see ptrace_bts_span(). */
static void ptrace_bts_empty(struct ptrace_bts *bts)
{
	if (bts->tracer) {
		/* Also re-arms the overflow signal. */
		WARN_ON_ONCE(ds_clear(bts->tracer));
	} else if (bts->buf) {
		memset(bts->buf, 0, bts->count * sizeof(*bts->buf));
		bts->count = 0;
	}
}

/*
 * Tracing.
 */

/* Called by the arbiter in hard interrupt context, see locking rule 2. */
static void ptrace_bts_overflow(struct ds_tracer *tracer, void *data)
{
	struct ptrace_bts *bts = data;

	send_sig(bts->signal, bts->task, 1);
}

/*
 * Put @bts on @buf of @nr records holding @snap[0, @count) (oldest first)
 * and ask the arbiter for what @flags say: nothing, branches, switch
 * records.  On error the records are in @buf untraced.
 */
static int ptrace_bts_load(struct ptrace_bts *bts, struct ds_bts_record *buf,
			   size_t nr, const struct ds_bts_record *snap,
			   size_t count, u32 flags)
{
	struct ds_config cfg = {
		.base	= buf,
		.size	= nr * sizeof(*buf),
		.data	= bts,
	};
	struct ds_tracer *tracer;

	if (WARN_ON_ONCE(bts->tracer || count > nr))
		return -EINVAL;

	bts->buf = buf;
	bts->nr = nr;
	bts->count = 0;
	if (!buf)
		return 0;
	memset(buf, 0, nr * sizeof(*buf));

	if (flags & (PTRACE_BTS_O_TRACE | PTRACE_BTS_O_SCHED)) {
		/* User branches only: a debugger never sees the kernel's. */
		if (flags & PTRACE_BTS_O_TRACE)
			cfg.flags |= DS_TRACE_USER;
		if (flags & PTRACE_BTS_O_SCHED)
			cfg.flags |= DS_TIMESTAMPS;
		if (flags & PTRACE_BTS_O_SIGNAL)
			cfg.overflow = ptrace_bts_overflow;

		tracer = ds_request_bts(bts->task, -1, &cfg);
		if (!IS_ERR(tracer)) {
			bts->tracer = tracer;
			/* The arbiter starts at the beginning. */
			if (count)
				WARN_ON_ONCE(ds_write(tracer, snap,
						      count * sizeof(*snap)) < 0);
			return 0;
		}
		memcpy(buf, snap, count * sizeof(*snap));
		bts->count = count;
		return PTR_ERR(tracer);
	}

	memcpy(buf, snap, count * sizeof(*snap));
	bts->count = count;
	return 0;
}

/* Stop recording; the records stay in the buffer. */
static void ptrace_bts_stop(struct ptrace_bts *bts)
{
	if (bts->tracer) {
		WARN_ON_ONCE(ds_release(bts->tracer));
		bts->tracer = NULL;
	}
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

	snap = kvmalloc_array(n, sizeof(*snap), GFP_KERNEL);
	if (!snap)
		return ERR_PTR(-ENOMEM);
	head = min(n, bts->nr - first);
	memcpy(snap, &bts->buf[first], head * sizeof(*snap));
	memcpy(snap + head, bts->buf, (n - head) * sizeof(*snap));
	return snap;
}

static void ptrace_bts_free_buf(struct ptrace_bts *bts)
{
	vfree(bts->buf);
	bts->buf = NULL;
	bts->nr = 0;
	bts->count = 0;
	if (bts->mm) {
		ptrace_bts_uncharge(bts->mm, bts->pages);
		mmdrop(bts->mm);
		bts->mm = NULL;
	}
	bts->pages = 0;
}

/* Forget everything: no recording, no buffer, no charge. */
static void ptrace_bts_free(struct ptrace_bts *bts)
{
	ptrace_bts_assert_owner(bts->task);
	ptrace_bts_stop(bts);
	ptrace_bts_free_buf(bts);
	bts->task->thread.ptrace_bts = NULL;
	put_pid(bts->owner);
	kfree(bts);
}

/*
 * The requests.
 */

static int ptrace_bts_check_config(struct ptrace_bts *bts,
				   const struct ptrace_bts_config *cfg)
{
	u32 recording = cfg->flags & ~PTRACE_BTS_O_ALLOC;

	if (cfg->flags & ~PTRACE_BTS_O_ALL)
		return -EINVAL;
	if (cfg->bts_size && cfg->bts_size != sizeof(struct bts_struct))
		return -EINVAL;

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
		if (recording && !(bts && bts->buf))
			return -EINVAL;
	}

	if ((cfg->flags & PTRACE_BTS_O_TRACE) &&
	    ds_record_size(DS_BTS) == -EOPNOTSUPP)
		return -EOPNOTSUPP;
	return 0;
}

static int ptrace_bts_config(struct task_struct *child, struct ptrace_bts *bts,
			     const void __user *ucfg, unsigned long usize)
{
	struct ds_bts_record *buf = NULL, *snap;
	struct ptrace_bts_config cfg;
	unsigned long pages = 0;
	u32 old_flags, old_signal;
	size_t nr = 0, count;
	int err;

	if (usize < sizeof(cfg) || usize > PAGE_SIZE)
		return -EINVAL;
	err = copy_struct_from_user(&cfg, sizeof(cfg), ucfg, usize);
	if (err)
		return err;
	err = ptrace_bts_check_config(bts, &cfg);
	if (err)
		return err;

	if (!bts) {
		/* Nothing configured and nothing asked for. */
		if (!cfg.size)
			return 0;
		bts = kzalloc(sizeof(*bts), GFP_KERNEL);
		if (!bts)
			return -ENOMEM;
		bts->task = child;
		bts->owner = get_pid(task_pid(current));
		child->thread.ptrace_bts = bts;
	}

	if ((cfg.flags & PTRACE_BTS_O_ALLOC) && cfg.size) {
		nr = cfg.size / sizeof(struct bts_struct);
		pages = ptrace_bts_pages(nr);
		err = ptrace_bts_charge(current->mm, pages);
		if (err)
			goto out_empty;
		buf = vmalloc(pages << PAGE_SHIFT);
		if (!buf) {
			err = -ENOMEM;
			goto out_uncharge;
		}
	}

	/* Kept for a new configuration of the buffer, or a failed one. */
	snap = ptrace_bts_snapshot(bts, &count);
	if (IS_ERR(snap)) {
		err = PTR_ERR(snap);
		goto out_free;
	}

	ptrace_bts_stop(bts);
	old_flags = bts->flags;
	old_signal = bts->signal;
	bts->flags = cfg.flags & ~PTRACE_BTS_O_ALLOC;
	bts->signal = cfg.signal;

	if (cfg.flags & PTRACE_BTS_O_ALLOC) {
		struct ds_bts_record *old_buf = bts->buf;
		size_t old_nr = bts->nr;

		err = ptrace_bts_load(bts, buf, nr, NULL, 0, bts->flags);
		if (err) {
			bts->buf = old_buf;
			bts->nr = old_nr;
			goto out_restore;
		}
		/* The old buffer and its charge go; the new ones stay. */
		bts->buf = old_buf;
		ptrace_bts_free_buf(bts);
		bts->buf = buf;
		bts->nr = nr;
		bts->pages = pages;
		if (buf) {
			bts->mm = current->mm;
			mmgrab(bts->mm);
		}
		bts->size = cfg.size;
	} else {
		err = ptrace_bts_load(bts, bts->buf, bts->nr, snap, count,
				      bts->flags);
		if (err)
			goto out_restore;
	}
	kvfree(snap);

	if (!bts->buf)
		ptrace_bts_free(bts);
	return 0;

out_restore:
	bts->flags = old_flags;
	bts->signal = old_signal;
	ptrace_bts_stop(bts);
	if (ptrace_bts_load(bts, bts->buf, bts->nr, snap, count, old_flags)) {
		/* Say what is true: the records are there, nothing records. */
		bts->flags &= ~(PTRACE_BTS_O_TRACE | PTRACE_BTS_O_SCHED);
		ptrace_bts_load(bts, bts->buf, bts->nr, snap, count, 0);
	}
	kvfree(snap);
out_free:
	vfree(buf);
out_uncharge:
	if (pages)
		ptrace_bts_uncharge(current->mm, pages);
out_empty:
	if (!bts->buf)
		ptrace_bts_free(bts);
	return err;
}

static int ptrace_bts_status(struct ptrace_bts *bts, void __user *ucfg,
			     unsigned long usize)
{
	struct ptrace_bts_config cfg = {
		.bts_size = sizeof(struct bts_struct),
	};

	if (usize < sizeof(cfg))
		return -EINVAL;
	if (bts) {
		cfg.size = bts->size;
		cfg.flags = bts->flags;
		cfg.signal = bts->signal;
	}
	return copy_to_user(ucfg, &cfg, sizeof(cfg)) ? -EFAULT : 0;
}

static int ptrace_bts_get(struct ptrace_bts *bts, void __user *urec,
			  unsigned long index)
{
	struct bts_struct rec;
	size_t first, count;

	if (!bts)
		return -EINVAL;
	ptrace_bts_span(bts, &first, &count);
	if (index >= count)
		return -EINVAL;

	/* 0 is the newest. */
	ptrace_bts_translate(ptrace_bts_at(bts, first, count - 1 - index),
			     ptrace_bts_pid(bts), &rec);
	return copy_to_user(urec, &rec, sizeof(rec)) ? -EFAULT : 0;
}

static long ptrace_bts_drain(struct ptrace_bts *bts, void __user *urecs,
			     unsigned long usize)
{
	struct bts_struct __user *out = urecs;
	size_t first, count, i, n, j;
	struct bts_struct *chunk;
	long err = 0;
	u32 pid;

	if (!bts)
		return 0;
	ptrace_bts_span(bts, &first, &count);
	if (!count)
		return 0;
	if (usize / sizeof(*out) < count)
		return -EIO;

	chunk = kmalloc_array(PTRACE_BTS_CHUNK, sizeof(*chunk), GFP_KERNEL);
	if (!chunk)
		return -ENOMEM;

	pid = ptrace_bts_pid(bts);
	for (i = 0; i < count; i += n) {
		n = min(count - i, PTRACE_BTS_CHUNK);
		for (j = 0; j < n; j++)
			ptrace_bts_translate(ptrace_bts_at(bts, first, i + j),
					     pid, &chunk[j]);
		if (copy_to_user(out + i, chunk, n * sizeof(*chunk))) {
			err = -EFAULT;
			break;
		}
		/* A tracer being killed stops here; the records stay. */
		if (fatal_signal_pending(current)) {
			err = -EINTR;
			break;
		}
		cond_resched();
	}
	kfree(chunk);
	if (err)
		return err;

	ptrace_bts_empty(bts);
	return count;
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
 * layout for all.  A configuration made by an earlier tracer that did not
 * detach (it exited) is dropped first: a tracer sees only its own trace.
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
	size_t first, count;
	long ret;

	ptrace_bts_assert_owner(child);
	bts = child->thread.ptrace_bts;
	if (bts && bts->owner != task_pid(current)) {
		ptrace_bts_free(bts);
		bts = NULL;
	}

	switch (request) {
	case PTRACE_BTS_CONFIG:
		ret = ptrace_bts_config(child, bts, uaddr, data);
		break;
	case PTRACE_BTS_STATUS:
		ret = ptrace_bts_status(bts, uaddr, data);
		break;
	case PTRACE_BTS_SIZE:
		ret = -EINVAL;
		if (addr || data)
			break;
		count = 0;
		if (bts)
			ptrace_bts_span(bts, &first, &count);
		ret = count;
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
 * when the tracee exits: recording stops, the buffer is freed and its pages
 * are given back to the tracer's RLIMIT_MEMLOCK.  Tasks that were never
 * traced return at once.
 *
 * Context: process context, may sleep.
 */
void ptrace_bts_release(struct task_struct *child)
{
	struct ptrace_bts *bts = child->thread.ptrace_bts;

	/* Serialization rule 1: @child is frozen for us or is current. */
	if (bts)
		ptrace_bts_free(bts);
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
