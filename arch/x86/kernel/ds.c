// SPDX-License-Identifier: GPL-2.0
/*
 * Debug Store arbiter: the BTS and PEBS halves of the DS area for
 * per-task and per-cpu tracers, next to perf.
 *
 * Perf owns the DS area of each cpu (the cpu_entry_area's debug_store,
 * pointed to by MSR_IA32_DS_AREA) and a per-cpu buffer for each half,
 * mapped in the cpu_entry_area so that the hardware can write it from user
 * mode under PTI.  While ds.c has tracers on a half, it borrows that half
 * from perf (perf's own users of the half fail with -EBUSY, and ds.c's
 * requests fail with -EBUSY while perf uses it): the hardware writes into
 * perf's per-cpu buffer, the "window", and ds.c moves the records from the
 * window into the buffers its tracers supplied, keeping for each tracer the
 * records of its task or cpu and of its user/kernel choice.  The hardware
 * writes nothing but the window, so a tracer's buffer can be any kernel
 * memory, and the hardware traces the union of what the tracers loaded on a
 * cpu want; software does the rest of the filtering.
 *
 * The window is drained into the tracers: when a traced task is switched
 * out or in, when the window reaches its interrupt threshold, on
 * ds_flush(), ds_suspend() and release.
 *
 * See Documentation/arch/x86/debug-store.rst.
 */

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/init.h>
#include <linux/irq_work.h>
#include <linux/lockdep.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/nmi.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/task.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include <asm/apic.h>
#include <asm/cpu_entry_area.h>
#include <asm/debugreg.h>
#include <asm/ds.h>
#include <asm/intel_ds.h>
#include <asm/msr.h>
#include <asm/perf_event.h>

#include <kunit/visibility.h>

#include "ds_hw.h"

/**
 * struct ds_tracer - one request for one half
 * @half: %DS_BTS or %DS_PEBS
 * @flags: the request's DS_* flags
 * @task: the traced task; %NULL for a per-cpu tracer and once the task
 *	has exited.  Holds a reference on the task.
 * @cpu: the traced cpu; -1 for a per-task tracer
 * @detached: the traced task has exited
 * @soft: a %DS_TIMESTAMPS-only task tracer: software records, no hardware
 * @suspended: ds_suspend() was called
 * @overflow: the overflow callback; %NULL for a circular buffer
 * @data: the callback's argument
 * @base: the buffer
 * @rsz: the size of one record
 * @nr: the number of records in @base
 * @threshold: the index at which @overflow is called
 * @lock: protects @index, @used, @lost, @armed, @pebs_reset and
 *	@pebs_enable
 * @index: where the next record goes, in records
 * @used: the records written since the request or the last ds_clear():
 *	the highest @index reached (@nr once wrapped); what ds_clear() zeroes
 * @lost: records dropped because the linear buffer was full
 * @armed: @overflow is to be called when @index reaches @threshold
 * @pebs_reset: the PEBS counter reset values
 * @pebs_enable: the counters that store PEBS records while it is loaded
 * @work: calls @overflow in hard interrupt context
 */
struct ds_tracer {
	enum ds_half half;
	unsigned int flags;
	struct task_struct *task;
	int cpu;
	bool detached;
	bool soft;
	bool suspended;
	void (*overflow)(struct ds_tracer *tracer, void *data);
	void *data;
	u8 *base;
	size_t rsz;
	size_t nr;
	size_t threshold;
	raw_spinlock_t lock;
	size_t index;
	size_t used;
	u64 lost;
	bool armed;
	u64 pebs_reset[DS_PEBS_NR_RESET];
	u64 pebs_enable;
	struct irq_work work;
};

/* Consumers of a window, see struct ds_cpu_half. */
enum {
	DS_LOADED_CPU = 0,
	DS_LOADED_TASK,
	DS_NR_LOADED,
};

/**
 * struct ds_cpu_half - one half of one cpu
 * @slot: the per-cpu tracer; written under ds_mutex
 * @loaded: the tracers the window's records are for: the per-cpu tracer and
 *	the current task's tracer, as of the last load
 * @ctl: what the hardware was told (DS_CTL_*); 0 when nothing is loaded
 * @saved: perf's fields of the half, restored when ds.c gives it back;
 *	used under ds_mutex while the half is not active
 * @pebs_enable: PEBS only: what MSR_IA32_PEBS_ENABLE was set to at the
 *	last load, the enables of the tracers loaded
 */
struct ds_cpu_half {
	struct ds_tracer *slot;
	struct ds_tracer *loaded[DS_NR_LOADED];
	unsigned int ctl;
	struct ds_fields saved;
	u64 pebs_enable;
};

/*
 * What a cpu's halves are doing, for the NMI handler and for cpu hotplug.
 * Only the cpu itself changes it, with interrupts disabled:
 *
 *   DS_CPU_DEAD ---ds_cpu_online()---> DS_CPU_LOADED (nothing loaded yet)
 *   DS_CPU_LOADED ---reload, switch---> DS_CPU_CHANGING ---> DS_CPU_LOADED
 *   DS_CPU_LOADED ---ds_cpu_offline()--> DS_CPU_CHANGING ---> DS_CPU_DEAD
 *
 * DS_CPU_DEAD: nothing is loaded and nothing loads.  A cpu is dead for the
 * arbiter from its CPUHP_AP_ONLINE_DYN teardown, while it still schedules
 * tasks and takes IPIs, until the same state comes up again; so a traced
 * task switched on a dying cpu, or a reload IPI that races the teardown,
 * leaves the hardware off and no tracer pointer behind.
 * DS_CPU_LOADED: ds_cpu_half.loaded and the windows are stable; the NMI
 * handler may drain the BTS window in place.
 * DS_CPU_CHANGING: a load or unload is under way; the NMI handler leaves
 * the windows to the irq_work.
 */
enum ds_cpu_state {
	DS_CPU_DEAD = 0,
	DS_CPU_LOADED,
	DS_CPU_CHANGING,
};

/**
 * struct ds_cpu - the arbiter's state of one cpu
 * @half: per half
 * @state: an &enum ds_cpu_state
 * @work: drains the windows after an overflow interrupt
 * @claimed: the NMI handler took an overflow interrupt and left it to
 *	@work, which has not acknowledged it yet
 */
struct ds_cpu {
	struct ds_cpu_half half[DS_NR_HALVES];
	enum ds_cpu_state state;
	struct irq_work work;
	bool claimed;
};

static DEFINE_PER_CPU(struct ds_cpu, ds_cpus);

/*
 * Locking rules:
 *
 * 1. ds_mutex serializes requests, releases, suspend/resume/flush and the
 *    exit and exec hooks.  It protects the tracer slots
 *    (task->thread.ds_tracers[] and ds_cpu_half.slot), ds_users[],
 *    ds_info[], ds_cpu_half.saved and the KUnit model, and ds.c's side of
 *    ds_owner[].  perf never takes it: its claims are one atomic operation
 *    on ds_owner[] (ds_perf_get()), so that creating an event never waits
 *    for the grace periods and IPIs of another user's request.
 * 2. A slot is read without ds_mutex only with interrupts disabled, on the
 *    cpu whose hardware it configures (context switch, IPI, irq_work,
 *    hotplug).  Writers publish with WRITE_ONCE() and then make the cpu that
 *    may have loaded the old value reload (ds_kick_*()); since those readers
 *    run with interrupts disabled, synchronize_rcu() waits for any that
 *    still looks at an old value.
 * 3. struct ds_cpu, but for @slot and @saved, is used only by its own cpu
 *    with interrupts disabled.  Code that changes what is loaded goes
 *    through DS_CPU_CHANGING (ds_cpu_begin()); the NMI handler, which can
 *    interrupt it, only drains the BTS window in place, and only in
 *    DS_CPU_LOADED.  A dead cpu (DS_CPU_DEAD) loads nothing, so a tracer
 *    whose cpu could not be kicked because it is offline is not loaded.
 * 4. ds_tracer.lock protects a tracer's buffer state; it is the innermost
 *    lock and may be taken in any context, in NMI context only with
 *    raw_spin_trylock().
 */
static DEFINE_MUTEX(ds_mutex);

/* The number of tracers of each half (attached or not). */
static unsigned int ds_users[DS_NR_HALVES];
/*
 * Who has each half: the number of perf's users if positive, -1 while ds.c
 * has tracers on it, 0 if nobody.  perf's side is lock-free; ds.c changes
 * it under ds_mutex, in ds_reserve() and ds_unreserve().
 */
static atomic_t ds_owner[DS_NR_HALVES];
/* Record and window size, valid while ds_active[half]. */
static struct ds_hw_info ds_info[DS_NR_HALVES];
/* The half is borrowed from perf and may be loaded. */
static bool ds_active[DS_NR_HALVES];

static_assert(offsetof(struct debug_store, bts_interrupt_threshold) -
	      offsetof(struct debug_store, bts_buffer_base) ==
	      offsetof(struct ds_fields, threshold));
static_assert(offsetof(struct debug_store, pebs_interrupt_threshold) -
	      offsetof(struct debug_store, pebs_buffer_base) ==
	      offsetof(struct ds_fields, threshold));
static_assert(ARRAY_SIZE(((struct debug_store *)NULL)->pebs_event_reset) ==
	      DS_PEBS_NR_RESET);
static_assert(ARRAY_SIZE(((struct thread_struct *)NULL)->ds_tracers) ==
	      DS_NR_HALVES);

/*
 * The hardware.
 *
 * Each function below is the hardware's, called directly.  A kernel built
 * with the KUnit suite can have them redirected to the suite's model of the
 * DS area (ds_set_model()).  That is not a KUnit static stub: the hardware
 * is driven from context switches, IPIs, irq_work and NMIs on any cpu and in
 * any task, and a static stub only redirects the test's own task.  Without
 * the suite, ds_model() is a constant %NULL and the redirection compiles
 * away.
 */

#if IS_ENABLED(CONFIG_X86_DS_KUNIT_TEST)
/* The suite's model; changed under ds_mutex while nothing is borrowed. */
static const struct ds_hw_model *ds_model_ptr;

static const struct ds_hw_model *ds_model(void)
{
	return READ_ONCE(ds_model_ptr);
}
#else
static inline const struct ds_hw_model *ds_model(void)
{
	return NULL;
}
#endif

/* Whether the cpu itself has @half, whatever drives it; touches no MSR. */
static bool ds_cpu_has(enum ds_half half)
{
	/* perf and ds.c only know the 64-bit DS format. */
	if (!boot_cpu_has(X86_FEATURE_DTES64))
		return false;
	if (half == DS_BTS)
		return boot_cpu_has(X86_FEATURE_BTS);
	return boot_cpu_has(X86_FEATURE_PEBS);
}

/* Whether the hardware (or the model) has @half; touches no MSR. */
static bool ds_hw_supported(enum ds_half half)
{
	const struct ds_hw_model *model = ds_model();

	if (unlikely(model))
		return model->supported(half);
	return ds_cpu_has(half);
}

static int ds_hw_info(enum ds_half half, struct ds_hw_info *info)
{
	const struct ds_hw_model *model = ds_model();

	if (unlikely(model))
		return model->info(half, info);
	return x86_perf_ds_info(half, info);
}

static int ds_hw_reserve(enum ds_half half)
{
	const struct ds_hw_model *model = ds_model();

	if (unlikely(model))
		return model->reserve(half);
	return x86_perf_ds_reserve(half);
}

static void ds_hw_unreserve(enum ds_half half)
{
	const struct ds_hw_model *model = ds_model();

	if (unlikely(model)) {
		model->unreserve(half);
		return;
	}
	x86_perf_ds_unreserve(half);
}

/* The DS area of @cpu, the one MSR_IA32_DS_AREA points to. */
static struct debug_store *ds_hw_area(int cpu)
{
	const struct ds_hw_model *model = ds_model();

	if (unlikely(model))
		return model->area(cpu);
	return &get_cpu_entry_area(cpu)->cpu_debug_store;
}

/*
 * The buffer of @half on @cpu that the hardware writes into: perf's, in
 * the cpu_entry_area, which the user page tables map too.
 */
static void *ds_hw_window(int cpu, enum ds_half half)
{
	const struct ds_hw_model *model = ds_model();
	struct debug_store_buffers *buf;

	if (unlikely(model))
		return model->window(cpu, half);
	buf = &get_cpu_entry_area(cpu)->cpu_debug_buffers;
	return half == DS_BTS ? buf->bts_buffer : buf->pebs_buffer;
}

#define DS_DEBUGCTL_BTS_BITS						\
	(DEBUGCTLMSR_TR | DEBUGCTLMSR_BTS | DEBUGCTLMSR_BTINT |	\
	 DEBUGCTLMSR_BTS_OFF_OS | DEBUGCTLMSR_BTS_OFF_USR)

static void ds_hw_set_pebs_enable(u64 enable)
{
	const struct ds_hw_model *model = ds_model();

	if (unlikely(model)) {
		model->set_pebs_enable(enable);
		return;
	}
	wrmsrl(MSR_IA32_PEBS_ENABLE, enable);
}

/*
 * The hardware stores a PEBS record whenever a counter enabled for PEBS
 * overflows, whatever ds.c is doing: the enables of the loaded tracers are
 * on only between a load and the next unload, so that no record lands in a
 * window that is being drained or set up (and is lost when its index is
 * reset), nor in one that nobody loaded.
 */
static void ds_hw_set_pebs(unsigned int ctl)
{
	struct ds_cpu_half *ch = this_cpu_ptr(&ds_cpus.half[DS_PEBS]);

	if (!(ctl & DS_CTL_ON)) {
		if (ch->pebs_enable)
			ds_hw_set_pebs_enable(0);
		ch->pebs_enable = 0;
		return;
	}

	/* ds_info[DS_PEBS].record_size is the size of a basic record. */
	if (likely(!ds_model()))
		x86_perf_ds_pebs_basic();
	if (ch->pebs_enable)
		ds_hw_set_pebs_enable(ch->pebs_enable);
}

/* Other users (LBR, BTF) own the other bits of DEBUGCTL. */
static void ds_hw_set_debugctl(unsigned int ctl)
{
	unsigned long debugctl = get_debugctlmsr() & ~DS_DEBUGCTL_BTS_BITS;

	if (ctl & DS_CTL_ON) {
		debugctl |= DEBUGCTLMSR_TR | DEBUGCTLMSR_BTS;
		if (ctl & DS_CTL_INT)
			debugctl |= DEBUGCTLMSR_BTINT;
		if (!(ctl & DS_CTL_KERNEL))
			debugctl |= DEBUGCTLMSR_BTS_OFF_OS;
		if (!(ctl & DS_CTL_USER))
			debugctl |= DEBUGCTLMSR_BTS_OFF_USR;
	}
	update_debugctlmsr(debugctl);
}

/* Program @half of this cpu with DS_CTL_* bits; 0 stops it. */
static void ds_hw_set_ctl(enum ds_half half, unsigned int ctl)
{
	const struct ds_hw_model *model = ds_model();

	lockdep_assert_irqs_disabled();

	if (unlikely(model))
		model->set_ctl(half, ctl);
	if (half == DS_PEBS)
		ds_hw_set_pebs(ctl);
	else if (likely(!model))
		ds_hw_set_debugctl(ctl);
}

/* Re-arm the overflow interrupt on this cpu after a drain. */
static void ds_hw_ack(void)
{
	const struct ds_hw_model *model = ds_model();

	if (unlikely(model)) {
		model->ack();
		return;
	}

	/* The LVT entry masks itself when it delivers the interrupt. */
	if (boot_cpu_has(X86_FEATURE_PEBS) && READ_ONCE(ds_active[DS_PEBS]))
		wrmsrl(MSR_CORE_PERF_GLOBAL_OVF_CTRL, GLOBAL_STATUS_BUFFER_OVF);
	apic_write(APIC_LVTPC, APIC_DM_NMI);
}

/**
 * ds_area_fields() - the four fields of a half in a DS area
 * @ds: the DS area
 * @half: the half
 *
 * Return: the fields of @half, which are laid out as &struct ds_fields.
 */
VISIBLE_IF_KUNIT struct ds_fields *ds_area_fields(struct debug_store *ds,
						  enum ds_half half)
{
	return (struct ds_fields *)(half == DS_BTS ? &ds->bts_buffer_base :
						      &ds->pebs_buffer_base);
}

/*
 * Tracer buffers.
 */

/*
 * The most ds_write() copies and ds_clear() zeroes with interrupts off at
 * a time: a buffer may be megabytes, and callers include an unprivileged
 * ptrace loop.  A window drain copies at most the window.
 */
#define DS_IRQOFF_BYTES		SZ_8K

static size_t ds_irqoff_records(const struct ds_tracer *t)
{
	return max_t(size_t, DS_IRQOFF_BYTES / t->rsz, 1);
}

/* Whether a record is of kernel mode, by the address that was executing. */
static bool ds_record_is_kernel(enum ds_half half, const u8 *rec)
{
	const u64 *ip = (const u64 *)rec;

	/* BTS: the branch source; PEBS: the eventing ip, after the flags. */
	return ip[half == DS_BTS ? 0 : 1] >= TASK_SIZE_MAX;
}

static bool __ds_store(struct ds_tracer *t, const void *rec)
{
	lockdep_assert_held(&t->lock);

	/* Only a linear buffer can be full. */
	if (t->index >= t->nr) {
		t->lost++;
		return false;
	}

	memcpy(t->base + t->index * t->rsz, rec, t->rsz);
	t->index++;
	t->used = max(t->used, t->index);

	if (t->overflow) {
		if (t->armed && t->index >= t->threshold) {
			/* The callback may not run under the scheduler. */
			t->armed = false;
			irq_work_queue(&t->work);
		}
	} else if (t->index == t->nr) {
		t->index = 0;
	}
	return true;
}

static void ds_store_escape(struct ds_tracer *t, enum ds_bts_qualifier qual)
{
	struct ds_bts_record rec = {
		.from	= DS_BTS_ESCAPE,
		.to	= qual,
		.flags	= local_clock(),
	};
	unsigned long irqflags;

	raw_spin_lock_irqsave(&t->lock, irqflags);
	__ds_store(t, &rec);
	raw_spin_unlock_irqrestore(&t->lock, irqflags);
}

/* Copy the records in [@rec, @top) that @t asked for into its buffer. */
static void __ds_deliver(struct ds_tracer *t, const u8 *rec, const u8 *top)
{
	bool kernel_ok = t->flags & DS_TRACE_KERNEL;
	bool user_ok = t->flags & DS_TRACE_USER;
	struct ds_bts_record bts;
	bool kernel;

	lockdep_assert_held(&t->lock);

	for (; rec < top; rec += t->rsz) {
		kernel = ds_record_is_kernel(t->half, rec);
		if (kernel ? !kernel_ok : !user_ok)
			continue;

		if (t->half == DS_BTS && !kernel_ok) {
			/*
			 * A branch from user mode into the kernel (a system
			 * call, an exception) is a user record, but its
			 * target is a kernel address, which a tracer that
			 * does not trace the kernel does not get to see.
			 */
			memcpy(&bts, rec, sizeof(bts));
			if (bts.to >= TASK_SIZE_MAX)
				bts.to = 0;
			__ds_store(t, &bts);
		} else {
			__ds_store(t, rec);
		}
	}
}

static void ds_deliver(struct ds_tracer *t, const u8 *rec, const u8 *top)
{
	raw_spin_lock(&t->lock);
	__ds_deliver(t, rec, top);
	raw_spin_unlock(&t->lock);
}

/*
 * Per-cpu hardware state.
 */

/*
 * Pass the records of this cpu's window of @half to @deliver, once for
 * each tracer loaded, and empty the window.
 */
static void ds_drain_window(struct ds_cpu_half *ch, enum ds_half half,
			    void (*deliver)(struct ds_tracer *t, const u8 *rec,
					    const u8 *top))
{
	struct ds_fields *f = ds_area_fields(ds_hw_area(smp_processor_id()),
					     half);
	const u8 *base = (const u8 *)(unsigned long)f->base;
	const u8 *top = (const u8 *)(unsigned long)f->index;
	const u8 *max = (const u8 *)(unsigned long)f->max;
	int i;

	/* The hardware never writes beyond the maximum. */
	if (WARN_ON_ONCE(top > max))
		top = max;

	for (i = 0; i < DS_NR_LOADED; i++) {
		if (ch->loaded[i] && top > base)
			deliver(ch->loaded[i], base, top);
	}
	f->index = f->base;
}

/* Move the window's records to the tracers they were written for. */
static void ds_drain(struct ds_cpu_half *ch, enum ds_half half)
{
	int i;

	lockdep_assert_irqs_disabled();

	ds_drain_window(ch, half, ds_deliver);
	for (i = 0; i < DS_NR_LOADED; i++)
		ch->loaded[i] = NULL;
}

/*
 * Bracket a change of what this cpu has loaded, so that the NMI handler
 * does not drain a window that is being drained or set up.  The NMI runs
 * on this cpu: compiler barriers order the state against the change.
 *
 * Return: false if the cpu is dead for the arbiter; then nothing is loaded
 * and nothing may be.
 */
static bool ds_cpu_begin(struct ds_cpu *dc)
{
	lockdep_assert_irqs_disabled();

	if (dc->state == DS_CPU_DEAD)
		return false;
	WRITE_ONCE(dc->state, DS_CPU_CHANGING);
	barrier();
	return true;
}

static void ds_cpu_end(struct ds_cpu *dc, enum ds_cpu_state state)
{
	barrier();
	WRITE_ONCE(dc->state, state);
}

static void ds_cpu_unload(struct ds_cpu_half *ch, enum ds_half half)
{
	if (!ch->ctl)
		return;

	/* Stop the hardware before taking the records from under it. */
	ds_hw_set_ctl(half, 0);
	ch->ctl = 0;
	ds_drain(ch, half);
}

static struct ds_tracer *ds_live(struct ds_tracer *t)
{
	return t && !READ_ONCE(t->suspended) ? t : NULL;
}

/* The PEBS reset values and enables of the cpu's and the task's tracer. */
static void ds_cpu_load_pebs(struct ds_cpu_half *ch, int cpu,
			     struct ds_tracer *ct, struct ds_tracer *tt)
{
	/* The task's reset values apply while it runs. */
	struct ds_tracer *src = tt ? tt : ct;
	u64 enable = 0;

	raw_spin_lock(&src->lock);
	memcpy(ds_hw_area(cpu)->pebs_event_reset, src->pebs_reset,
	       sizeof(src->pebs_reset));
	raw_spin_unlock(&src->lock);

	if (ct) {
		raw_spin_lock(&ct->lock);
		enable |= ct->pebs_enable;
		raw_spin_unlock(&ct->lock);
	}
	if (tt) {
		raw_spin_lock(&tt->lock);
		enable |= tt->pebs_enable;
		raw_spin_unlock(&tt->lock);
	}
	ch->pebs_enable = enable;
}

/*
 * The records linear tracer @t can take from a window of user mode before
 * its overflow callback is due, or, once the callback was made, before it
 * is full; SIZE_MAX for a tracer that gains nothing from an early
 * interrupt: circular, full, or one that takes no window records (a soft
 * tracer, whose switch records ds.c writes itself, or one of kernel mode
 * alone).
 */
static size_t __ds_tracer_room(struct ds_tracer *t)
{
	lockdep_assert_held(&t->lock);

	if (!t->overflow || t->soft || !(t->flags & DS_TRACE_USER))
		return SIZE_MAX;
	if (t->armed && t->index < t->threshold)
		return t->threshold - t->index;
	if (t->index < t->nr)
		return t->nr - t->index;
	return SIZE_MAX;
}

static size_t ds_tracer_room(struct ds_tracer *t)
{
	size_t room;

	if (!t)
		return SIZE_MAX;
	raw_spin_lock(&t->lock);
	room = __ds_tracer_room(t);
	raw_spin_unlock(&t->lock);
	return room;
}

/*
 * The least a window interrupts after: the interrupt's own way back to
 * user mode may store a record that no user-mode tracer takes (the SDM
 * leaves open which end of a privilege crossing BTS_OFF_OS looks at), so
 * a threshold of one record could be reached by that record alone, again
 * and again.  With two, every early interrupt brings a tracer a record.
 */
#define DS_WINDOW_MIN_THRESHOLD	2

/*
 * Set the interrupt threshold of this cpu's window of @half: like perf,
 * with a sixteenth of the window to spare, or earlier if a loaded linear
 * tracer has @room for fewer records.  The window is drained into the
 * tracers only at its interrupt (or a switch), so without that a linear
 * tracer would go from below its threshold to full, dropping the rest of
 * a window, before its overflow callback could stop anything; with it
 * the callback comes while the tracer still has the room it reserved
 * beyond its threshold for what the hardware writes until then.
 *
 * Only for a BTS window of user mode alone (@ctl): one that also traces
 * the kernel refills from the interrupt's own way out, and an early
 * threshold there would interrupt again and again without a user record
 * to show for it.  PEBS windows keep perf's threshold.
 */
static void ds_window_arm(struct ds_fields *f, enum ds_half half,
			  unsigned int ctl, size_t room)
{
	size_t nr = ds_info[half].window_size / ds_info[half].record_size;
	size_t at = nr - max_t(size_t, nr / 16, 1);

	if (half == DS_BTS && !(ctl & DS_CTL_KERNEL) && room < at)
		at = max_t(size_t, room, DS_WINDOW_MIN_THRESHOLD);
	f->threshold = f->base + at * ds_info[half].record_size;
}

static void ds_cpu_load(struct ds_cpu_half *ch, enum ds_half half,
			struct task_struct *task)
{
	int cpu = smp_processor_id();
	struct ds_tracer *ct, *tt;
	unsigned int flags = 0;
	struct ds_fields *f;
	unsigned int ctl;
	size_t nr;
	u64 base;

	lockdep_assert_irqs_disabled();

	ct = ds_live(READ_ONCE(ch->slot));
	tt = task ? ds_live(READ_ONCE(task->thread.ds_tracers[half])) : NULL;
	if (ct)
		flags |= ct->flags;
	if (tt)
		flags |= tt->flags;
	if (!(flags & (DS_TRACE_USER | DS_TRACE_KERNEL)))
		return;

	ch->loaded[DS_LOADED_CPU] = ct;
	ch->loaded[DS_LOADED_TASK] = tt;

	nr = ds_info[half].window_size / ds_info[half].record_size;
	base = (unsigned long)ds_hw_window(cpu, half);
	f = ds_area_fields(ds_hw_area(cpu), half);
	f->base = base;
	f->index = base;
	f->max = base + nr * ds_info[half].record_size;

	if (half == DS_PEBS)
		ds_cpu_load_pebs(ch, cpu, ct, tt);

	ctl = DS_CTL_ON | DS_CTL_INT;
	if (flags & DS_TRACE_USER)
		ctl |= DS_CTL_USER;
	if (flags & DS_TRACE_KERNEL)
		ctl |= DS_CTL_KERNEL;
	/* Only a BTS window of user mode alone heeds a tracer's room. */
	ds_window_arm(f, half, ctl,
		      half == DS_BTS && !(ctl & DS_CTL_KERNEL) ?
		      min(ds_tracer_room(ct), ds_tracer_room(tt)) : SIZE_MAX);
	ch->ctl = ctl;
	ds_hw_set_ctl(half, ctl);
}

/* Drain this cpu's windows and load what @task and the cpu want now. */
static void ds_cpu_reload(struct task_struct *task)
{
	struct ds_cpu *dc = this_cpu_ptr(&ds_cpus);
	int half;

	if (!ds_cpu_begin(dc))
		return;
	for (half = 0; half < DS_NR_HALVES; half++) {
		ds_cpu_unload(&dc->half[half], half);
		/* Pairs with the release in ds_reserve(): ds_info is set. */
		if (smp_load_acquire(&ds_active[half]))
			ds_cpu_load(&dc->half[half], half, task);
	}
	ds_cpu_end(dc, DS_CPU_LOADED);
}

static void ds_reload_ipi(void *unused)
{
	ds_cpu_reload(current);
}

static void ds_kick_cpu(int cpu)
{
	/*
	 * Order the slot update before the test of cpu_online() in
	 * smp_call_function_single(); pairs with smp_mb() in ds_cpu_online().
	 * An offline cpu is dead for the arbiter (ds_cpu_offline() ran before
	 * it left the online mask) and reads the slot in ds_cpu_online(); so
	 * the -ENXIO of an offline cpu is no error.
	 */
	smp_mb();
	smp_call_function_single(cpu, ds_reload_ipi, NULL, 1);
}

static void ds_kick_task(struct task_struct *task)
{
	/*
	 * Order the slot update before reading task_cpu(): if @task moves
	 * on after this, its context switch reloads (it still has TIF_DS).
	 */
	smp_mb();
	ds_kick_cpu(task_cpu(task));
}

/**
 * ds_hw_overflow() - drain this cpu's windows after an overflow interrupt
 *
 * Called by the irq_work the NMI handler queues, and by the KUnit model of
 * the hardware when a window reaches its interrupt threshold.
 *
 * Context: hard interrupt context or interrupts disabled.
 */
VISIBLE_IF_KUNIT void ds_hw_overflow(void)
{
	lockdep_assert_irqs_disabled();

	ds_cpu_reload(current);
	/* The windows are below their thresholds: a new NMI is a new one. */
	WRITE_ONCE(this_cpu_ptr(&ds_cpus)->claimed, false);
	ds_hw_ack();
}

static void ds_overflow_irq_work(struct irq_work *work)
{
	ds_hw_overflow();
}

/*
 * Drain this cpu's BTS window from the NMI, leaving the tracers loaded.
 *
 * Draining in the irq_work instead would record the kernel's interrupt
 * entry and exit around it, once the hardware is re-armed, into the
 * emptied window.  On a kernel whose interrupt path takes more branches
 * than the window holds up to its threshold (lockdep and KASAN are
 * enough), that refills the window before the interrupted code runs
 * again: another overflow, another irq_work, and the cpu never gets back.
 * From here only the NMI's own short exit is recorded, as with perf's BTS.
 *
 * Return: false if the window must be left to the irq_work: a load is
 * under way, or the code the NMI interrupted holds a tracer's lock.
 */
static bool ds_drain_bts_nmi(struct ds_cpu *dc)
{
	struct ds_cpu_half *ch = &dc->half[DS_BTS];
	int i, locked;

	if (READ_ONCE(dc->state) != DS_CPU_LOADED)
		return false;

	for (locked = 0; locked < DS_NR_LOADED; locked++) {
		struct ds_tracer *t = ch->loaded[locked];

		if (t && !raw_spin_trylock(&t->lock))
			break;
	}

	if (locked == DS_NR_LOADED) {
		size_t room = SIZE_MAX;

		/* Stop the hardware before taking the records from under it. */
		ds_hw_set_ctl(DS_BTS, 0);
		ds_drain_window(ch, DS_BTS, __ds_deliver);
		for (i = 0; i < DS_NR_LOADED && !(ch->ctl & DS_CTL_KERNEL); i++) {
			if (ch->loaded[i])
				room = min(room, __ds_tracer_room(ch->loaded[i]));
		}
		ds_window_arm(ds_area_fields(ds_hw_area(smp_processor_id()),
					     DS_BTS), DS_BTS, ch->ctl, room);
		ds_hw_set_ctl(DS_BTS, ch->ctl);
	}

	for (i = 0; i < locked; i++) {
		if (ch->loaded[i])
			raw_spin_unlock(&ch->loaded[i]->lock);
	}
	return locked == DS_NR_LOADED;
}

/* Whether @half of this cpu has reached its interrupt threshold. */
static bool ds_cpu_overflowed(struct ds_cpu *dc, enum ds_half half)
{
	struct ds_fields *f;

	if (!(READ_ONCE(dc->half[half].ctl) & DS_CTL_INT))
		return false;
	f = ds_area_fields(ds_hw_area(smp_processor_id()), half);
	return READ_ONCE(f->index) >= READ_ONCE(f->threshold);
}

/**
 * ds_nmi_handler() - take this cpu's overflow interrupt
 * @cmd: NMI_LOCAL
 * @regs: unused
 *
 * The hardware interrupts when a window reaches its threshold.  A window
 * the NMI cannot drain stays above its threshold until the irq_work has,
 * and the NMIs that come in between are not the arbiter's: of other
 * sources, or of the same overflow once perf's handler, which runs first
 * while perf has events, has unmasked the LVT entry; perf claims those
 * (intel_bts_interrupt() by the BTS index, PEBS by GLOBAL_STATUS).
 *
 * Return: NMI_HANDLED for the overflow interrupt, NMI_DONE otherwise.
 */
VISIBLE_IF_KUNIT int ds_nmi_handler(unsigned int cmd, struct pt_regs *regs)
{
	struct ds_cpu *dc = this_cpu_ptr(&ds_cpus);
	bool bts, pebs;

	if (READ_ONCE(dc->claimed))
		return NMI_DONE;
	bts = ds_cpu_overflowed(dc, DS_BTS);
	pebs = ds_cpu_overflowed(dc, DS_PEBS);
	if (!bts && !pebs)
		return NMI_DONE;

	/*
	 * A PEBS window, which does not refill from the drain's own branches,
	 * is drained by the irq_work, as is a BTS window that cannot be
	 * drained here.  The hardware keeps writing into the slack beyond the
	 * threshold until then.
	 */
	if (pebs || !ds_drain_bts_nmi(dc)) {
		WRITE_ONCE(dc->claimed, true);
		irq_work_queue(&dc->work);
	} else {
		ds_hw_ack();
	}
	return NMI_HANDLED;
}

/*
 * Borrowing a half from perf.
 */

static int ds_reserve(enum ds_half half, const struct ds_hw_info *info)
{
	int cpu, err;

	lockdep_assert_held(&ds_mutex);

	/* Not while perf uses the half; perf's claims fail from here on. */
	if (!atomic_dec_unless_positive(&ds_owner[half]))
		return -EBUSY;

	err = ds_hw_reserve(half);
	if (err) {
		atomic_inc(&ds_owner[half]);
		return err;
	}

	for_each_possible_cpu(cpu) {
		struct ds_fields *f = ds_area_fields(ds_hw_area(cpu), half);

		per_cpu_ptr(&ds_cpus, cpu)->half[half].saved = *f;
	}
	ds_info[half] = *info;
	/* Pairs with the acquire in ds_cpu_reload(). */
	smp_store_release(&ds_active[half], true);
	return 0;
}

static void ds_unreserve(enum ds_half half)
{
	int cpu;

	lockdep_assert_held(&ds_mutex);

	WRITE_ONCE(ds_active[half], false);
	/* Wait for reloads that still saw the half active. */
	synchronize_rcu();

	for_each_possible_cpu(cpu) {
		struct ds_fields *f = ds_area_fields(ds_hw_area(cpu), half);

		*f = per_cpu_ptr(&ds_cpus, cpu)->half[half].saved;
	}
	ds_hw_unreserve(half);
	/* perf's fields are back before perf may claim the half. */
	smp_mb__before_atomic();
	atomic_inc(&ds_owner[half]);
}

/*
 * Requests.
 */

static struct ds_tracer **ds_task_slot(struct task_struct *task,
				       enum ds_half half)
{
	return &task->thread.ds_tracers[half];
}

static struct ds_tracer **ds_cpu_slot(int cpu, enum ds_half half)
{
	return &per_cpu_ptr(&ds_cpus, cpu)->half[half].slot;
}

static bool ds_task_has_tracers(struct task_struct *task)
{
	int half;

	for (half = 0; half < DS_NR_HALVES; half++) {
		if (*ds_task_slot(task, half))
			return true;
	}
	return false;
}

static int ds_check_config(enum ds_half half, struct task_struct *task,
			   int cpu, const struct ds_config *cfg)
{
	unsigned long base;

	if (!cfg)
		return -EINVAL;
	if (cfg->flags & ~DS_FLAGS_ALL)
		return -EINVAL;
	if ((cfg->flags & DS_TIMESTAMPS) && (half != DS_BTS || !task))
		return -EINVAL;
	/* Only a task's switch records do without a mode to trace. */
	if (!(cfg->flags & (DS_TRACE_USER | DS_TRACE_KERNEL)) &&
	    cfg->flags != DS_TIMESTAMPS)
		return -EINVAL;
	if (!cfg->overflow && cfg->threshold)
		return -EINVAL;

	base = (unsigned long)cfg->base;
	if (!base || !IS_ALIGNED(base, DS_BUFFER_ALIGN))
		return -EINVAL;
	if (!virt_addr_valid(cfg->base) && !is_vmalloc_addr(cfg->base))
		return -EINVAL;
	if (base + cfg->size < base)
		return -EINVAL;

	if (task)
		return cpu == -1 ? 0 : -EINVAL;
	if (cpu < 0 || cpu >= nr_cpu_ids || !cpu_possible(cpu))
		return -EINVAL;
	return 0;
}

/*
 * A reset (ds_reset(), ds_clear()) between the overflow and this work arms
 * the tracer again: the overflow it was queued for is gone, and a user that
 * emptied its buffer must not hear of it.  The lock orders the callback
 * before a reset or after it, never beside it.
 */
static void ds_overflow_work(struct irq_work *work)
{
	struct ds_tracer *t = container_of(work, struct ds_tracer, work);

	raw_spin_lock(&t->lock);
	if (!t->armed)
		t->overflow(t, t->data);
	raw_spin_unlock(&t->lock);
}

/*
 * A tracer of a task's switch records alone is all software: it works on a
 * cpu without BTS and does not borrow the half from perf.
 */
static bool ds_is_soft(enum ds_half half, struct task_struct *task,
		       const struct ds_config *cfg)
{
	return cfg && half == DS_BTS && task && cfg->flags == DS_TIMESTAMPS;
}

/*
 * Step 1 of a request: check it against the hardware and @cfg, and say
 * what a record and the window of @half are.  Takes no lock.
 */
static int ds_request_check(enum ds_half half, struct task_struct *task,
			    int cpu, const struct ds_config *cfg, bool soft,
			    struct ds_hw_info *info)
{
	int err;

	/* No hardware, no MSR access: every request fails the same way. */
	if (!soft && !ds_hw_supported(half))
		return -EOPNOTSUPP;

	err = ds_check_config(half, task, cpu, cfg);
	if (err)
		return err;

	if (soft) {
		info->record_size = DS_BTS_RECORD_SIZE;
		info->window_size = 0;
	} else {
		err = ds_hw_info(half, info);
		if (err)
			return err;
	}

	if (!cfg->size || cfg->size % info->record_size)
		return -EINVAL;
	if (cfg->threshold >= cfg->size / info->record_size)
		return -EINVAL;
	return 0;
}

/* Step 2: a tracer for a checked request, not yet attached to anything. */
static struct ds_tracer *ds_tracer_alloc(enum ds_half half,
					 struct task_struct *task, int cpu,
					 const struct ds_config *cfg, bool soft,
					 size_t record_size)
{
	struct ds_tracer *t;

	/* Made on behalf of the requester: charged to its memory cgroup. */
	t = kzalloc(sizeof(*t), GFP_KERNEL_ACCOUNT);
	if (!t)
		return NULL;

	t->half = half;
	t->flags = cfg->flags;
	t->soft = soft;
	t->cpu = task ? -1 : cpu;
	t->overflow = cfg->overflow;
	t->data = cfg->data;
	t->base = cfg->base;
	t->rsz = record_size;
	t->nr = cfg->size / record_size;
	t->threshold = t->nr - cfg->threshold;
	t->armed = !!cfg->overflow;
	raw_spin_lock_init(&t->lock);
	t->work = IRQ_WORK_INIT_HARD(ds_overflow_work);
	return t;
}

/*
 * Step 3: mark @task as traced, unless it is exiting.
 *
 * An exiting task sets PF_EXITING and later tests TIF_DS in
 * ds_exit_thread(), with smp_mb() in between; here TIF_DS is set before
 * PF_EXITING is tested.  So either we see PF_EXITING and back out, or
 * ds_exit_thread() sees TIF_DS and, on ds_mutex, detaches what we attach.
 */
static int ds_tag_task(struct task_struct *task)
{
	lockdep_assert_held(&ds_mutex);

	set_tsk_thread_flag(task, TIF_DS);
	/* TIF_DS before PF_EXITING; pairs with ds_exit_thread(). */
	smp_mb__after_atomic();
	if (!(task->flags & PF_EXITING))
		return 0;
	if (!ds_task_has_tracers(task))
		clear_tsk_thread_flag(task, TIF_DS);
	return -ESRCH;
}

/* Step 4: count a tracer of @half, borrowing the half for the first. */
static int ds_get_half(enum ds_half half, const struct ds_hw_info *info)
{
	int err;

	lockdep_assert_held(&ds_mutex);

	if (!ds_users[half]) {
		err = ds_reserve(half, info);
		if (err)
			return err;
	} else if (WARN_ON_ONCE(info->record_size !=
				ds_info[half].record_size)) {
		return -EINVAL;
	}
	ds_users[half]++;
	return 0;
}

/* Step 5: publish @t in its slot and make its task's or cpu's cpu load it. */
static void ds_attach(struct ds_tracer *t, struct ds_tracer **slot,
		      struct task_struct *task, int cpu)
{
	lockdep_assert_held(&ds_mutex);

	if (task) {
		get_task_struct(task);
		t->task = task;
		WRITE_ONCE(*slot, t);
		ds_kick_task(task);
	} else {
		WRITE_ONCE(*slot, t);
		ds_kick_cpu(cpu);
	}
}

/* Steps 1 and 2: a checked tracer for @cfg, and what its half offers. */
static struct ds_tracer *ds_tracer_new(enum ds_half half,
				       struct task_struct *task, int cpu,
				       const struct ds_config *cfg,
				       struct ds_hw_info *info)
{
	bool soft = ds_is_soft(half, task, cfg);
	struct ds_tracer *t;
	int err;

	err = ds_request_check(half, task, cpu, cfg, soft, info);
	if (err)
		return ERR_PTR(err);
	t = ds_tracer_alloc(half, task, cpu, cfg, soft, info->record_size);
	return t ? t : ERR_PTR(-ENOMEM);
}

/*
 * The end of a tracer that is in no slot any more: wait for context
 * switches that may still look at it and give back its count on the half,
 * under ds_mutex; then ds_tracer_free() it.
 */
static void ds_tracer_put_half(struct ds_tracer *t)
{
	lockdep_assert_held(&ds_mutex);

	synchronize_rcu();
	if (!t->soft && !--ds_users[t->half])
		ds_unreserve(t->half);
}

/* After ds_tracer_put_half(): drop @task (its task, if any) and free it. */
static void ds_tracer_free(struct ds_tracer *t, struct task_struct *task)
{
	if (task)
		put_task_struct(task);
	irq_work_sync(&t->work);
	kfree(t);
}

static struct ds_tracer *ds_request(enum ds_half half,
				    struct task_struct *task, int cpu,
				    const struct ds_config *cfg)
{
	struct ds_tracer *t, **slot;
	struct ds_hw_info info;
	int err;

	t = ds_tracer_new(half, task, cpu, cfg, &info);
	if (IS_ERR(t))
		return t;

	mutex_lock(&ds_mutex);

	err = -EBUSY;
	slot = task ? ds_task_slot(task, half) : ds_cpu_slot(cpu, half);
	if (*slot)
		goto out_free;

	if (task) {
		err = ds_tag_task(task);
		if (err)
			goto out_free;
	}

	/* A soft tracer has nothing to borrow. */
	if (!t->soft) {
		err = ds_get_half(half, &info);
		if (err)
			goto out_untag;
	}

	ds_attach(t, slot, task, cpu);
	mutex_unlock(&ds_mutex);
	return t;

out_untag:
	if (task && !ds_task_has_tracers(task))
		clear_tsk_thread_flag(task, TIF_DS);
out_free:
	mutex_unlock(&ds_mutex);
	kfree(t);
	return ERR_PTR(err);
}

/**
 * ds_request_bts() - trace branches of a task or a cpu
 * @task: the task to trace, or %NULL to trace @cpu
 * @cpu: the cpu to trace, or -1 with @task
 * @cfg: buffer, overflow handling and flags; see &struct ds_config
 *
 * A per-task tracer gets the branches of @task on whichever cpu it runs; a
 * per-cpu tracer gets the branches of every task on @cpu (once @cpu is
 * online).  Each gets only the user and/or kernel branches it asked for.
 * There is at most one BTS tracer per task and one per cpu; a task tracer
 * and a cpu tracer coexist.  The tracer is not inherited by children of
 * @task and is detached when @task exits; the buffer stays the caller's
 * until ds_release().
 *
 * A task tracer with @cfg->flags just %DS_TIMESTAMPS gets only the escape
 * records of @task's context switches and exec.  It is all software: it
 * works on a cpu without BTS and does not keep perf from using BTS.
 *
 * This layer does not check permissions: the caller decides whether it may
 * trace @task or @cpu.
 *
 * Context: process context, may sleep.
 * Return: the tracer; ERR_PTR(-EOPNOTSUPP) if the cpu has no BTS (and
 * the request is not for switch records alone),
 * ERR_PTR(-EINVAL) for a bad @cfg, @task or @cpu, ERR_PTR(-EBUSY) if @task
 * or @cpu already has a BTS tracer or perf uses BTS, ERR_PTR(-ESRCH) if
 * @task is exiting, ERR_PTR(-ENOMEM).
 */
struct ds_tracer *ds_request_bts(struct task_struct *task, int cpu,
				 const struct ds_config *cfg)
{
	return ds_request(DS_BTS, task, cpu, cfg);
}

/**
 * ds_request_pebs() - collect PEBS records of a task or a cpu
 * @task: the task, or %NULL for @cpu
 * @cpu: the cpu, or -1 with @task
 * @cfg: buffer, overflow handling and flags; see &struct ds_config
 *
 * Like ds_request_bts() for the PEBS half of the DS area.  ds.c manages the
 * buffer, the interrupt threshold and the counter reset values; arming
 * counters for PEBS is the caller's business.  %DS_TIMESTAMPS is not
 * supported.
 *
 * Context: process context, may sleep.
 * Return: the tracer, or an ERR_PTR() as for ds_request_bts().
 */
struct ds_tracer *ds_request_pebs(struct task_struct *task, int cpu,
				  const struct ds_config *cfg)
{
	return ds_request(DS_PEBS, task, cpu, cfg);
}

/**
 * ds_release() - stop a tracer and free it
 * @tracer: from ds_request_bts() or ds_request_pebs()
 *
 * The records traced so far are in the buffer when this returns; the
 * buffer is the caller's again.  The overflow callback is not running and
 * will not run.
 *
 * Context: process context, may sleep.
 * Return: 0, or -EINVAL if @tracer is not a tracer.
 */
int ds_release(struct ds_tracer *tracer)
{
	struct task_struct *task = NULL;
	enum ds_half half;

	if (IS_ERR_OR_NULL(tracer))
		return -EINVAL;
	half = tracer->half;

	mutex_lock(&ds_mutex);
	if (tracer->task) {
		task = tracer->task;
		WRITE_ONCE(*ds_task_slot(task, half), NULL);
		ds_kick_task(task);
		/* Only now: a switch with TIF_DS unloads on the way. */
		if (!ds_task_has_tracers(task))
			clear_tsk_thread_flag(task, TIF_DS);
		tracer->task = NULL;
	} else if (tracer->cpu >= 0) {
		WRITE_ONCE(*ds_cpu_slot(tracer->cpu, half), NULL);
		ds_kick_cpu(tracer->cpu);
	}
	ds_tracer_put_half(tracer);
	mutex_unlock(&ds_mutex);

	ds_tracer_free(tracer, task);
	return 0;
}

/**
 * ds_replace() - change what a tracer traces with, without a gap
 * @tracer: from ds_request_bts() or ds_request_pebs()
 * @cfg: the new buffer, overflow handling and flags, as for the request
 *
 * A new tracer of the same half, task or cpu, configured by @cfg, takes
 * @tracer's place in one step.  ds_release() and a new request would leave
 * a moment in which perf may take the half, and the request may then fail
 * with the old tracer gone; here everything that can fail happens first
 * and the half stays borrowed throughout, so a failure leaves @tracer as
 * it was, tracing.
 *
 * On success @tracer is released as by ds_release(): its records are in
 * its buffer and its overflow callback will not run.  The new tracer
 * starts empty and not suspended.
 *
 * Context: process context, may sleep.
 * Return: the new tracer; ERR_PTR(-EINVAL) if @tracer is not a tracer or
 * @cfg is bad, ERR_PTR(-ESRCH) if @tracer's task exited, or the other
 * errors of the request: ERR_PTR(-EBUSY) if the new tracer needs the half
 * and perf uses it (only when @tracer did not need it),
 * ERR_PTR(-EOPNOTSUPP), ERR_PTR(-ENOMEM).
 */
struct ds_tracer *ds_replace(struct ds_tracer *tracer,
			     const struct ds_config *cfg)
{
	struct ds_tracer *t, **slot;
	struct task_struct *task;
	struct ds_hw_info info;
	enum ds_half half;
	int cpu, err;

	if (IS_ERR_OR_NULL(tracer))
		return ERR_PTR(-EINVAL);
	half = tracer->half;
	cpu = tracer->cpu;

	mutex_lock(&ds_mutex);
	/* ds_exit_thread() detaches a task tracer on ds_mutex. */
	task = tracer->task;
	err = -ESRCH;
	if (!task && cpu < 0)
		goto out_unlock;
	slot = task ? ds_task_slot(task, half) : ds_cpu_slot(cpu, half);
	err = -EINVAL;
	if (WARN_ON_ONCE(*slot != tracer))
		goto out_unlock;

	t = ds_tracer_new(half, task, cpu, cfg, &info);
	err = PTR_ERR(t);
	if (IS_ERR(t))
		goto out_unlock;
	/* While @tracer holds the half this only counts. */
	if (!t->soft) {
		err = ds_get_half(half, &info);
		if (err)
			goto out_free;
	}

	/*
	 * The task is tagged already (TIF_DS).  The reload drains the
	 * window into @tracer, which the cpu had loaded, and loads @t.
	 */
	ds_attach(t, slot, task, cpu);
	ds_tracer_put_half(tracer);
	mutex_unlock(&ds_mutex);

	ds_tracer_free(tracer, task);
	return t;

out_free:
	kfree(t);
out_unlock:
	mutex_unlock(&ds_mutex);
	return ERR_PTR(err);
}

/* Make the hardware of @t's task or cpu reflect @t's state. */
static void ds_kick_tracer(struct ds_tracer *t)
{
	lockdep_assert_held(&ds_mutex);

	if (t->task)
		ds_kick_task(t->task);
	else if (t->cpu >= 0)
		ds_kick_cpu(t->cpu);
}

static int ds_set_suspended(struct ds_tracer *t, bool suspended)
{
	int err = 0;

	if (IS_ERR_OR_NULL(t))
		return -EINVAL;

	mutex_lock(&ds_mutex);
	if (t->detached) {
		err = -ESRCH;
	} else {
		WRITE_ONCE(t->suspended, suspended);
		ds_kick_tracer(t);
	}
	mutex_unlock(&ds_mutex);
	return err;
}

/**
 * ds_suspend() - stop tracing for now
 * @tracer: the tracer
 *
 * The hardware stops tracing for @tracer and the records traced so far are
 * in the buffer when this returns.  Other tracers are not affected.
 *
 * Context: process context, may sleep.
 * Return: 0, -EINVAL if @tracer is not a tracer, -ESRCH if its task exited.
 */
int ds_suspend(struct ds_tracer *tracer)
{
	return ds_set_suspended(tracer, true);
}

/**
 * ds_resume() - continue tracing after ds_suspend()
 * @tracer: the tracer
 *
 * Context: process context, may sleep.
 * Return: 0, -EINVAL if @tracer is not a tracer, -ESRCH if its task exited.
 */
int ds_resume(struct ds_tracer *tracer)
{
	return ds_set_suspended(tracer, false);
}

/**
 * ds_flush() - move the records traced so far into the buffer
 * @tracer: the tracer
 *
 * The hardware writes into a per-cpu window that ds.c drains into the
 * tracers' buffers at context switches and interrupts; this drains the
 * window of the cpu @tracer's task runs on, or of @tracer's cpu, now.  It
 * also loads new PEBS counter reset values.
 *
 * Context: process context, may sleep.
 * Return: 0, or -EINVAL if @tracer is not a tracer.
 */
int ds_flush(struct ds_tracer *tracer)
{
	if (IS_ERR_OR_NULL(tracer))
		return -EINVAL;

	mutex_lock(&ds_mutex);
	ds_kick_tracer(tracer);
	mutex_unlock(&ds_mutex);
	return 0;
}

/**
 * ds_record_size() - the size of one record of a half
 * @half: %DS_BTS or %DS_PEBS
 *
 * A tracer's buffer size is a multiple of this.
 *
 * Return: the size in bytes, -EINVAL for a bad @half, -EOPNOTSUPP if the
 * cpu does not have @half.
 */
int ds_record_size(enum ds_half half)
{
	struct ds_hw_info info;
	int err;

	if (half != DS_BTS && half != DS_PEBS)
		return -EINVAL;
	if (!ds_hw_supported(half))
		return -EOPNOTSUPP;
	err = ds_hw_info(half, &info);
	return err ? err : info.record_size;
}

/*
 * Buffer access.  These do not drain the window (see ds_flush()), take
 * only the tracer's lock and may be called in any context, including the
 * overflow callback.
 */

/**
 * ds_get_index() - where the next record goes
 * @tracer: the tracer
 * @index: set to the index of the next record; for a linear buffer also the
 *	number of records in it
 *
 * Context: any.
 * Return: 0, or -EINVAL for a bad argument.
 */
int ds_get_index(struct ds_tracer *tracer, size_t *index)
{
	unsigned long irqflags;

	if (IS_ERR_OR_NULL(tracer) || !index)
		return -EINVAL;

	raw_spin_lock_irqsave(&tracer->lock, irqflags);
	*index = tracer->index;
	raw_spin_unlock_irqrestore(&tracer->lock, irqflags);
	return 0;
}

/**
 * ds_get_end() - the number of records the buffer holds
 * @tracer: the tracer
 * @end: set to the index one past the last record
 *
 * Context: any.
 * Return: 0, or -EINVAL for a bad argument.
 */
int ds_get_end(struct ds_tracer *tracer, size_t *end)
{
	if (IS_ERR_OR_NULL(tracer) || !end)
		return -EINVAL;

	*end = tracer->nr;
	return 0;
}

/**
 * ds_get_lost() - the number of records dropped because the buffer was full
 * @tracer: the tracer
 * @lost: set to the count since the request or the last reset
 *
 * Only a linear buffer (with an overflow callback) drops records.
 *
 * Context: any.
 * Return: 0, or -EINVAL for a bad argument.
 */
int ds_get_lost(struct ds_tracer *tracer, u64 *lost)
{
	unsigned long irqflags;

	if (IS_ERR_OR_NULL(tracer) || !lost)
		return -EINVAL;

	raw_spin_lock_irqsave(&tracer->lock, irqflags);
	*lost = tracer->lost;
	raw_spin_unlock_irqrestore(&tracer->lock, irqflags);
	return 0;
}

/**
 * ds_access() - the address of a record
 * @tracer: the tracer
 * @index: the record's index, less than the end (ds_get_end())
 * @record: set to the record, in the caller's buffer
 *
 * Context: any.
 * Return: 0, or -EINVAL for a bad argument.
 */
int ds_access(struct ds_tracer *tracer, size_t index, const void **record)
{
	if (IS_ERR_OR_NULL(tracer) || !record || index >= tracer->nr)
		return -EINVAL;

	*record = tracer->base + index * tracer->rsz;
	return 0;
}

/**
 * ds_write() - append records to the buffer
 * @tracer: the tracer
 * @record: the records, in the half's format
 * @size: their size in bytes, a non-zero multiple of the record size
 *
 * The records are stored as if traced: a circular buffer wraps, a linear
 * buffer calls the overflow callback at its threshold and drops records
 * once full.  A record the hardware traced meanwhile may come before,
 * after or among them: they are stored a few kilobytes at a time, with
 * interrupts enabled in between.
 *
 * Context: any.
 * Return: the number of bytes stored, or -EINVAL for a bad argument.
 */
int ds_write(struct ds_tracer *tracer, const void *record, size_t size)
{
	const u8 *rec = record, *end;
	unsigned long irqflags;
	int written = 0;
	size_t step;

	if (IS_ERR_OR_NULL(tracer) || !record || !size || size > INT_MAX ||
	    size % tracer->rsz)
		return -EINVAL;

	/* A step at a time, interrupts on in between: see DS_IRQOFF_BYTES. */
	step = ds_irqoff_records(tracer) * tracer->rsz;
	while (size) {
		end = rec + min(size, step);
		size -= end - rec;
		raw_spin_lock_irqsave(&tracer->lock, irqflags);
		for (; rec < end; rec += tracer->rsz) {
			if (__ds_store(tracer, rec))
				written += tracer->rsz;
		}
		raw_spin_unlock_irqrestore(&tracer->lock, irqflags);
	}
	return written;
}

static void __ds_reset(struct ds_tracer *t)
{
	lockdep_assert_held(&t->lock);

	t->index = 0;
	t->lost = 0;
	t->armed = !!t->overflow;
}

/**
 * ds_reset() - start over at the beginning of the buffer
 * @tracer: the tracer
 *
 * The write index and the lost count go to 0 and the overflow callback is
 * armed again; the records stay in the buffer until overwritten.
 *
 * Context: any.
 * Return: 0, or -EINVAL if @tracer is not a tracer.
 */
int ds_reset(struct ds_tracer *tracer)
{
	unsigned long irqflags;

	if (IS_ERR_OR_NULL(tracer))
		return -EINVAL;

	raw_spin_lock_irqsave(&tracer->lock, irqflags);
	__ds_reset(tracer);
	raw_spin_unlock_irqrestore(&tracer->lock, irqflags);
	return 0;
}

/**
 * ds_clear() - zero the records and start over
 * @tracer: the tracer
 *
 * Like ds_reset(), and the records written since the request or the last
 * ds_clear() are zeroed; what the buffer held before the request stays.
 * The zeroing is done a few kilobytes at a time with interrupts enabled in
 * between, so its cost follows what was written, not the buffer's size;
 * records stored meanwhile are kept.
 *
 * Context: any.
 * Return: 0, or -EINVAL if @tracer is not a tracer.
 */
int ds_clear(struct ds_tracer *tracer)
{
	size_t pos, from, to, end, step;
	unsigned long irqflags;

	if (IS_ERR_OR_NULL(tracer))
		return -EINVAL;

	raw_spin_lock_irqsave(&tracer->lock, irqflags);
	end = tracer->used;
	tracer->used = 0;
	__ds_reset(tracer);
	raw_spin_unlock_irqrestore(&tracer->lock, irqflags);

	step = ds_irqoff_records(tracer);
	for (pos = 0; pos < end; pos += step) {
		raw_spin_lock_irqsave(&tracer->lock, irqflags);
		/* Below @used are records stored since: keep them. */
		from = max(pos, tracer->used);
		to = min(pos + step, end);
		if (from < to)
			memset(tracer->base + from * tracer->rsz, 0,
			       (to - from) * tracer->rsz);
		raw_spin_unlock_irqrestore(&tracer->lock, irqflags);
	}
	return 0;
}

/**
 * ds_get_pebs_reset() - read a PEBS counter reset value
 * @tracer: a PEBS tracer
 * @counter: the counter's index in the DS area, below %DS_PEBS_NR_RESET
 * @value: set to the value
 *
 * Context: any.
 * Return: 0, or -EINVAL for a bad argument or a BTS tracer.
 */
int ds_get_pebs_reset(struct ds_tracer *tracer, unsigned int counter,
		      u64 *value)
{
	unsigned long irqflags;

	if (IS_ERR_OR_NULL(tracer) || tracer->half != DS_PEBS || !value ||
	    counter >= DS_PEBS_NR_RESET)
		return -EINVAL;

	raw_spin_lock_irqsave(&tracer->lock, irqflags);
	*value = tracer->pebs_reset[counter];
	raw_spin_unlock_irqrestore(&tracer->lock, irqflags);
	return 0;
}

/**
 * ds_set_pebs_reset() - set a PEBS counter reset value
 * @tracer: a PEBS tracer
 * @counter: the counter's index in the DS area, below %DS_PEBS_NR_RESET
 * @value: the value the counter is reset to after a PEBS record
 *
 * The value reaches the DS area when the tracer is next loaded: at a
 * context switch of its task, on ds_flush() or ds_resume().  While a task
 * tracer's task runs, its values apply rather than the cpu tracer's.
 *
 * Context: any.
 * Return: 0, or -EINVAL for a bad argument or a BTS tracer.
 */
int ds_set_pebs_reset(struct ds_tracer *tracer, unsigned int counter,
		      u64 value)
{
	unsigned long irqflags;

	if (IS_ERR_OR_NULL(tracer) || tracer->half != DS_PEBS ||
	    counter >= DS_PEBS_NR_RESET)
		return -EINVAL;

	raw_spin_lock_irqsave(&tracer->lock, irqflags);
	tracer->pebs_reset[counter] = value;
	raw_spin_unlock_irqrestore(&tracer->lock, irqflags);
	return 0;
}

/**
 * ds_set_pebs_enable() - choose the counters that store PEBS records
 * @tracer: a PEBS tracer
 * @enable: MSR_IA32_PEBS_ENABLE bits, one per counter; 0 for none
 *
 * The arbiter owns MSR_IA32_PEBS_ENABLE while it has the PEBS half: it
 * sets a cpu's enables to those of the tracers loaded there (the cpu's
 * tracer and the running task's), and to 0 while it drains or sets up the
 * cpu's window and while nothing is loaded.  So a task tracer's counters
 * store records while its task runs, on whichever cpu, and never for
 * another tracer.  Programming the counters' event selects is the
 * caller's business.  A new tracer has no enables.  The enables take
 * effect before this returns.
 *
 * Context: process context, may sleep.
 * Return: 0, -EINVAL for a bad argument, a BTS tracer or a bit of a counter
 * that cannot store PEBS records, -ESRCH if the tracer's task exited.
 */
int ds_set_pebs_enable(struct ds_tracer *tracer, u64 enable)
{
	unsigned long irqflags;
	int err = 0;

	if (IS_ERR_OR_NULL(tracer) || tracer->half != DS_PEBS)
		return -EINVAL;

	mutex_lock(&ds_mutex);
	if (enable & ~ds_info[DS_PEBS].pebs_enable_mask) {
		err = -EINVAL;
	} else if (tracer->detached) {
		err = -ESRCH;
	} else {
		raw_spin_lock_irqsave(&tracer->lock, irqflags);
		tracer->pebs_enable = enable;
		raw_spin_unlock_irqrestore(&tracer->lock, irqflags);
		ds_kick_tracer(tracer);
	}
	mutex_unlock(&ds_mutex);
	return err;
}

/*
 * Hooks of the x86 core.
 */

/*
 * A switch record for @task's BTS tracer, read from the slot rather than
 * from what is loaded: a %DS_TIMESTAMPS-only tracer loads no hardware.
 */
static void ds_switch_record(struct task_struct *task,
			     enum ds_bts_qualifier qual)
{
	struct ds_tracer *t;

	/* Locking rule 2: interrupts are disabled on @task's cpu. */
	t = ds_live(READ_ONCE(*ds_task_slot(task, DS_BTS)));
	if (t && (t->flags & DS_TIMESTAMPS))
		ds_store_escape(t, qual);
}

/**
 * ds_switch_to() - context switch of a traced task
 * @prev: the task switched out
 * @next: the task switched in
 *
 * Called from __switch_to_xtra() when @prev or @next has TIF_DS; tasks
 * nobody traces never get here.
 *
 * Context: interrupts disabled, in the scheduler.
 */
void ds_switch_to(struct task_struct *prev, struct task_struct *next)
{
	struct ds_cpu *dc = this_cpu_ptr(&ds_cpus);
	bool live;
	int half;

	/* On a dying cpu only the switch records are written. */
	live = ds_cpu_begin(dc);
	for (half = 0; half < DS_NR_HALVES; half++) {
		struct ds_cpu_half *ch = &dc->half[half];

		/* @prev's branches go into its buffer before the record. */
		if (live)
			ds_cpu_unload(ch, half);
		if (half == DS_BTS)
			ds_switch_record(prev, DS_BTS_TASK_DEPARTS);

		/* Pairs with the release in ds_reserve(): ds_info is set. */
		if (live && smp_load_acquire(&ds_active[half]))
			ds_cpu_load(ch, half, next);
		if (half == DS_BTS)
			ds_switch_record(next, DS_BTS_TASK_ARRIVES);
	}
	if (live)
		ds_cpu_end(dc, DS_CPU_LOADED);
}

/**
 * ds_fork() - a new task does not inherit its parent's tracers
 * @child: the copy of the parent, not yet running
 *
 * Context: any.
 */
void ds_fork(struct task_struct *child)
{
	memset(child->thread.ds_tracers, 0, sizeof(child->thread.ds_tracers));
	clear_tsk_thread_flag(child, TIF_DS);
}

/**
 * ds_exec() - the current task executes a new program
 *
 * The records of the old program are moved into the buffer, followed by a
 * %DS_BTS_EXEC escape record for a BTS tracer with %DS_TIMESTAMPS.
 *
 * Context: process context, may sleep.
 */
void ds_exec(void)
{
	struct ds_tracer *t;

	if (!test_thread_flag(TIF_DS))
		return;

	mutex_lock(&ds_mutex);
	t = *ds_task_slot(current, DS_BTS);
	if (t && (t->flags & DS_TIMESTAMPS) && !t->suspended) {
		/*
		 * Here, not through an IPI to the cpu current was on: after
		 * a migration the records would wait in the new cpu's window.
		 */
		local_irq_disable();
		ds_cpu_reload(current);
		local_irq_enable();
		ds_store_escape(t, DS_BTS_EXEC);
	}
	mutex_unlock(&ds_mutex);
}

/**
 * ds_exit_thread() - the current task exits
 * @task: the task, current
 *
 * Detaches the task's tracers: their records are in their buffers, the
 * hardware no longer traces for them and they drop their task reference.
 * The tracers stay valid until their owners call ds_release().
 *
 * Context: process context, may sleep.
 */
void ds_exit_thread(struct task_struct *task)
{
	struct ds_tracer *gone[DS_NR_HALVES];
	int half;

	/* PF_EXITING is set: pairs with smp_mb__after_atomic() in ds_request(). */
	smp_mb();
	if (!test_tsk_thread_flag(task, TIF_DS))
		return;

	mutex_lock(&ds_mutex);
	for (half = 0; half < DS_NR_HALVES; half++) {
		gone[half] = *ds_task_slot(task, half);
		WRITE_ONCE(*ds_task_slot(task, half), NULL);
	}
	ds_kick_task(task);
	clear_tsk_thread_flag(task, TIF_DS);
	for (half = 0; half < DS_NR_HALVES; half++) {
		if (!gone[half])
			continue;
		gone[half]->task = NULL;
		gone[half]->detached = true;
		/* The exiting task holds a reference of its own. */
		put_task_struct(task);
	}
	mutex_unlock(&ds_mutex);
}

/*
 * perf.
 */

/**
 * ds_perf_get() - perf starts using a half
 * @half: %DS_BTS or %DS_PEBS
 *
 * Called by perf when it creates an event that uses @half, also for each
 * inherited copy at fork.  One atomic operation: it never waits for ds.c.
 *
 * Context: any.
 * Return: 0, or -EBUSY while ds.c has tracers on @half.
 */
int ds_perf_get(enum ds_half half)
{
	return atomic_inc_unless_negative(&ds_owner[half]) ? 0 : -EBUSY;
}

/**
 * ds_perf_put() - perf stops using a half
 * @half: %DS_BTS or %DS_PEBS, as given to a successful ds_perf_get()
 *
 * Context: any.
 */
void ds_perf_put(enum ds_half half)
{
	WARN_ON_ONCE(atomic_dec_return(&ds_owner[half]) < 0);
}

/*
 * For the KUnit suite, which is built in: visible to it, exported to no
 * module.
 */

#if IS_ENABLED(CONFIG_X86_DS_KUNIT_TEST)
/**
 * ds_set_model() - drive a software model instead of the hardware
 * @model: the model, or %NULL for the hardware
 *
 * Each ds_hw_*() function then calls @model's instead of doing its own work.
 *
 * Return: 0, or -EBUSY while ds.c or perf uses a half.
 */
int ds_set_model(const struct ds_hw_model *model)
{
	int half, err = 0;

	mutex_lock(&ds_mutex);
	for (half = 0; half < DS_NR_HALVES; half++) {
		if (ds_users[half] || atomic_read(&ds_owner[half]))
			err = -EBUSY;
	}
	if (!err)
		WRITE_ONCE(ds_model_ptr, model);
	mutex_unlock(&ds_mutex);
	return err;
}

/**
 * ds_nr_users() - the number of tracers of a half
 * @half: %DS_BTS or %DS_PEBS
 *
 * Return: the number of tracers that have not been released.
 */
unsigned int ds_nr_users(enum ds_half half)
{
	unsigned int n;

	mutex_lock(&ds_mutex);
	n = ds_users[half];
	mutex_unlock(&ds_mutex);
	return n;
}
#endif

/*
 * Setup.
 */

/*
 * The arbiter's cpu hotplug state, CPUHP_AP_ONLINE_DYN: both callbacks run
 * on @cpu.  Below it the cpu is dead for the arbiter (DS_CPU_DEAD) though
 * it may still run tasks: ds_switch_to() and the reload IPI leave it
 * unloaded.
 */
static int ds_cpu_online(unsigned int cpu)
{
	struct ds_cpu *dc = this_cpu_ptr(&ds_cpus);

	/*
	 * A writer whose kick found this cpu offline (-ENXIO) changed the
	 * slot before; read the slots after coming online.  Pairs with
	 * smp_mb() in ds_kick_cpu().
	 */
	smp_mb();
	local_irq_disable();
	/* An overflow claimed before the cpu died was drained by its death. */
	WRITE_ONCE(dc->claimed, false);
	/* Nothing is loaded yet, which is a stable state. */
	WRITE_ONCE(dc->state, DS_CPU_LOADED);
	ds_cpu_reload(current);
	local_irq_enable();
	return 0;
}

static int ds_cpu_offline(unsigned int cpu)
{
	struct ds_cpu *dc = this_cpu_ptr(&ds_cpus);
	int half;

	local_irq_disable();
	if (ds_cpu_begin(dc)) {
		for (half = 0; half < DS_NR_HALVES; half++)
			ds_cpu_unload(&dc->half[half], half);
		ds_cpu_end(dc, DS_CPU_DEAD);
	}
	local_irq_enable();
	return 0;
}

static int __init ds_init(void)
{
	int cpu, err;

	for_each_possible_cpu(cpu)
		per_cpu_ptr(&ds_cpus, cpu)->work =
			IRQ_WORK_INIT_HARD(ds_overflow_irq_work);

	/* Every cpu starts dead; this brings the online ones up. */
	err = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "x86/ds:online",
				ds_cpu_online, ds_cpu_offline);
	if (err < 0)
		return err;

	/* Without the hardware there is no interrupt to take. */
	if (ds_cpu_has(DS_BTS) || ds_cpu_has(DS_PEBS))
		return register_nmi_handler(NMI_LOCAL, ds_nmi_handler, 0,
					    "x86_ds");
	return 0;
}
device_initcall(ds_init);
