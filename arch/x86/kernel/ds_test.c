// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the Debug Store arbiter (arch/x86/kernel/ds.c).
 *
 * The arbiter's hardware layer is replaced by a software model of the DS
 * area: model_emit() stores a record the way the SDM describes (at the
 * index, which advances and wraps at the absolute maximum; with the
 * interrupt enabled the store stops at the threshold and the overflow path
 * runs), so that the arbiter's logic runs on any cpu.
 */

#include <kunit/test.h>

#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/initrd.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/nmi.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/umh.h>
#include <linux/vmalloc.h>

#include <asm/ds.h>
#include <asm/intel_ds.h>

/* x86_add_exclusive(), to stand for an LBR or PT user of perf. */
#include "../events/perf_event.h"
#include "ds_hw.h"

#define MODEL_PEBS_RSZ		48
/* Four general-purpose counters and three fixed ones. */
#define MODEL_PEBS_ENABLE_MASK	(GENMASK_ULL(3, 0) | GENMASK_ULL(34, 32))
#define MODEL_WINDOW_RECORDS	8
#define MODEL_PERF_SENTINEL	0x5eed0000ULL

#define USER_IP(n)		(0x400000ULL + (n))
#define KERNEL_IP(n)		(0xffffffff81000000ULL + (n))

#define MAX_TRACERS		8

struct model_cpu {
	struct debug_store *ds;
	u8 window[DS_NR_HALVES][MODEL_WINDOW_RECORDS * MODEL_PEBS_RSZ];
	unsigned int ctl[DS_NR_HALVES];
	unsigned int dropped[DS_NR_HALVES];
	unsigned int overflows[DS_NR_HALVES];
	/* MSR_IA32_PEBS_ENABLE: PEBS stores while it is not 0. */
	u64 pebs_enable;
	/* A PEBS record under way, stored before the enables go to 0. */
	u64 pebs_inflight_ip;
};

static struct model_cpu *model;
static bool model_supported[DS_NR_HALVES];
static int model_reserved[DS_NR_HALVES];
static int model_reserve_err;
static unsigned int model_acks;

static size_t model_rsz(enum ds_half half)
{
	return half == DS_BTS ? DS_BTS_RECORD_SIZE : MODEL_PEBS_RSZ;
}

static bool model_is_supported(enum ds_half half)
{
	return model_supported[half];
}

static int model_info(enum ds_half half, struct ds_hw_info *info)
{
	info->record_size = model_rsz(half);
	info->window_size = MODEL_WINDOW_RECORDS * model_rsz(half);
	info->pebs_enable_mask = half == DS_PEBS ? MODEL_PEBS_ENABLE_MASK : 0;
	return 0;
}

static int model_reserve(enum ds_half half)
{
	if (model_reserve_err)
		return model_reserve_err;
	model_reserved[half]++;
	return 0;
}

static void model_unreserve(enum ds_half half)
{
	model_reserved[half]--;
}

static struct debug_store *model_area(int cpu)
{
	return model[cpu].ds;
}

static void *model_window(int cpu, enum ds_half half)
{
	return model[cpu].window[half];
}

static void model_set_ctl(enum ds_half half, unsigned int ctl)
{
	model[smp_processor_id()].ctl[half] = ctl;
}

static bool model_store_pebs(struct model_cpu *m, u64 ip, u64 to);

static void model_set_pebs_enable(u64 enable)
{
	struct model_cpu *m = &model[smp_processor_id()];

	/* The WRMSR waits for a record under way, as the hardware does. */
	if (m->pebs_enable && !enable && m->pebs_inflight_ip) {
		model_store_pebs(m, m->pebs_inflight_ip, 0);
		m->pebs_inflight_ip = 0;
	}
	m->pebs_enable = enable;
}

static void model_ack(void)
{
	model_acks++;
}

static const struct ds_hw_model model_hw = {
	.supported	= model_is_supported,
	.info		= model_info,
	.reserve	= model_reserve,
	.unreserve	= model_unreserve,
	.area		= model_area,
	.window		= model_window,
	.set_ctl	= model_set_ctl,
	.set_pebs_enable = model_set_pebs_enable,
	.ack		= model_ack,
};

/*
 * The hardware stores a PEBS record at @ip on this cpu, as it does while a
 * counter is enabled, whatever ds.c loaded: up to the absolute maximum,
 * through the slack beyond the threshold.  Return: whether the window
 * reached its threshold with this record, which raises the interrupt.
 */
static bool model_store_pebs(struct model_cpu *m, u64 ip, u64 to)
{
	struct ds_fields *f = ds_area_fields(m->ds, DS_PEBS);
	u64 rec[MODEL_PEBS_RSZ / sizeof(u64)] = {};

	if (f->index < f->base || f->index + MODEL_PEBS_RSZ > f->max) {
		m->dropped[DS_PEBS]++;
		return false;
	}
	rec[1] = ip;
	rec[2] = to;
	memcpy((void *)(unsigned long)f->index, rec, MODEL_PEBS_RSZ);
	f->index += MODEL_PEBS_RSZ;
	return f->index >= f->threshold &&
	       f->index - MODEL_PEBS_RSZ < f->threshold;
}

static bool model_store_bts(struct model_cpu *m, bool kernel, u64 ip, u64 to)
{
	struct ds_fields *f = ds_area_fields(m->ds, DS_BTS);
	unsigned int ctl = m->ctl[DS_BTS];
	struct ds_bts_record rec = { .from = ip, .to = to };

	if (!(ctl & (kernel ? DS_CTL_KERNEL : DS_CTL_USER)))
		return false;
	if ((ctl & DS_CTL_INT) && f->index >= f->threshold) {
		/* Stopped at the threshold until the interrupt is served. */
		m->dropped[DS_BTS]++;
		return false;
	}
	memcpy((void *)(unsigned long)f->index, &rec, sizeof(rec));
	f->index += sizeof(rec);
	if (f->index >= f->max)
		f->index = f->base;
	return (ctl & DS_CTL_INT) && f->index >= f->threshold;
}

/*
 * The hardware stores one record on this cpu: a branch from @ip to @to
 * (BTS), or a sample at @ip (PEBS), in kernel or user mode.  BTS stores
 * as DEBUGCTL says, PEBS while a counter is armed for it; PEBS filters by
 * mode per counter, not in the DS area.
 */
static void model_emit(enum ds_half half, bool kernel, u64 ip, u64 to)
{
	unsigned long irqflags;
	struct model_cpu *m;
	bool interrupt;

	/* The hardware stores atomically with respect to interrupts. */
	local_irq_save(irqflags);
	m = &model[smp_processor_id()];
	if (half == DS_PEBS && m->pebs_enable)
		interrupt = model_store_pebs(m, ip, to);
	else if (half == DS_BTS && (m->ctl[DS_BTS] & DS_CTL_ON))
		interrupt = model_store_bts(m, kernel, ip, to);
	else
		interrupt = false;
	if (interrupt) {
		m->overflows[half]++;
		ds_hw_overflow();
	}
	local_irq_restore(irqflags);
}

static void emit_user(u64 n)
{
	model_emit(DS_BTS, false, USER_IP(n), USER_IP(n + 0x1000));
}

static void emit_kernel(u64 n)
{
	model_emit(DS_BTS, true, KERNEL_IP(n), KERNEL_IP(n + 0x1000));
}

static unsigned int this_ctl(enum ds_half half)
{
	return model[raw_smp_processor_id()].ctl[half];
}

/*
 * Test context.
 */

struct x86_ds_ctx {
	int cpu;
	struct ds_tracer *tracers[MAX_TRACERS];
	atomic_t overflows;
	void *overflow_data;
};

static struct x86_ds_ctx *ctx_of(struct kunit *test)
{
	return test->priv;
}

static void *buffer(struct kunit *test)
{
	/* A power of two: naturally aligned, beyond DS_BUFFER_ALIGN. */
	void *buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	return buf;
}

static struct ds_config config(struct kunit *test, enum ds_half half,
			       size_t records, unsigned int flags)
{
	struct ds_config cfg = {
		.base	= buffer(test),
		.size	= records * model_rsz(half),
		.flags	= flags,
	};

	return cfg;
}

static struct ds_tracer *request(struct kunit *test, enum ds_half half,
				 struct task_struct *task, int cpu,
				 const struct ds_config *cfg)
{
	struct x86_ds_ctx *ctx = ctx_of(test);
	struct ds_tracer *t;
	int i;

	t = half == DS_BTS ? ds_request_bts(task, cpu, cfg) :
			     ds_request_pebs(task, cpu, cfg);
	if (IS_ERR(t))
		return t;

	for (i = 0; i < MAX_TRACERS; i++) {
		if (!ctx->tracers[i]) {
			ctx->tracers[i] = t;
			return t;
		}
	}
	KUNIT_FAIL(test, "too many tracers");
	return t;
}

static struct ds_tracer *request_ok(struct kunit *test, enum ds_half half,
				    struct task_struct *task, int cpu,
				    const struct ds_config *cfg)
{
	struct ds_tracer *t = request(test, half, task, cpu, cfg);

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(t), "request: %ld", PTR_ERR(t));
	return t;
}

static void release(struct kunit *test, struct ds_tracer *t)
{
	struct x86_ds_ctx *ctx = ctx_of(test);
	int i;

	for (i = 0; i < MAX_TRACERS; i++) {
		if (ctx->tracers[i] == t)
			ctx->tracers[i] = NULL;
	}
	KUNIT_EXPECT_EQ(test, ds_release(t), 0);
}

static size_t index_of(struct kunit *test, struct ds_tracer *t)
{
	size_t index = ~0UL;

	KUNIT_EXPECT_EQ(test, ds_get_index(t, &index), 0);
	return index;
}

static const struct ds_bts_record *bts(struct kunit *test,
				       struct ds_tracer *t, size_t i)
{
	const void *rec = NULL;

	KUNIT_ASSERT_EQ(test, ds_access(t, i, &rec), 0);
	return rec;
}

static void expect_bts(struct kunit *test, struct ds_tracer *t, size_t i,
		       u64 from, u64 to)
{
	const struct ds_bts_record *rec = bts(test, t, i);

	KUNIT_EXPECT_EQ_MSG(test, rec->from, from, "record %zu", i);
	KUNIT_EXPECT_EQ_MSG(test, rec->to, to, "record %zu", i);
}

static void test_overflow(struct ds_tracer *t, void *data)
{
	struct x86_ds_ctx *ctx = data;

	ctx->overflow_data = data;
	atomic_inc(&ctx->overflows);
}

/* Run @fn on the test's cpu in a kthread; return it, still referenced. */
struct on_cpu {
	struct completion done;
	void (*fn)(struct on_cpu *oc);
};

static int on_cpu_thread(void *arg)
{
	struct on_cpu *oc = arg;

	oc->fn(oc);
	complete(&oc->done);
	return 0;
}

static struct task_struct *create_on_cpu(struct kunit *test,
					 struct on_cpu *oc,
					 void (*fn)(struct on_cpu *oc))
{
	struct task_struct *k;

	init_completion(&oc->done);
	oc->fn = fn;
	k = kthread_create(on_cpu_thread, oc, "x86_ds_test");
	KUNIT_ASSERT_FALSE(test, IS_ERR(k));
	kthread_bind(k, ctx_of(test)->cpu);
	get_task_struct(k);
	return k;
}

static void finish_on_cpu(struct kunit *test, struct task_struct *k,
			  struct on_cpu *oc)
{
	wait_for_completion(&oc->done);
	kthread_stop_put(k);
}

/*
 * Setup.
 */

static int x86_ds_test_init(struct kunit *test)
{
	struct x86_ds_ctx *ctx;
	int cpu, half, err;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	test->priv = ctx;

	model = kcalloc(nr_cpu_ids, sizeof(*model), GFP_KERNEL);
	if (!model)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		/* A power of two, hence page aligned like the real one. */
		model[cpu].ds = kzalloc(sizeof(*model[cpu].ds), GFP_KERNEL);
		if (!model[cpu].ds)
			return -ENOMEM;
		/* What perf had there; ds.c must give it back. */
		for (half = 0; half < DS_NR_HALVES; half++) {
			struct ds_fields *f = ds_area_fields(model[cpu].ds,
							     half);
			u64 perf = MODEL_PERF_SENTINEL + half * 16;

			f->base = perf;
			f->index = perf + 1;
			f->max = perf + 2;
			f->threshold = perf + 3;
		}
	}
	model_supported[DS_BTS] = true;
	model_supported[DS_PEBS] = true;
	model_reserve_err = 0;
	model_acks = 0;

	err = ds_set_model(&model_hw);
	if (err)
		kunit_skip(test, "Debug Store tracers or perf users are active");

	/* The model emits on the current cpu: stay on one. */
	ctx->cpu = raw_smp_processor_id();
	set_cpus_allowed_ptr(current, cpumask_of(ctx->cpu));
	return 0;
}

static void x86_ds_test_exit(struct kunit *test)
{
	struct x86_ds_ctx *ctx = ctx_of(test);
	int cpu, i;

	if (ctx) {
		for (i = 0; i < MAX_TRACERS; i++) {
			if (ctx->tracers[i])
				ds_release(ctx->tracers[i]);
		}
	}

	/* Nothing may be left behind. */
	KUNIT_EXPECT_EQ(test, ds_nr_users(DS_BTS), 0);
	KUNIT_EXPECT_EQ(test, ds_nr_users(DS_PEBS), 0);
	KUNIT_EXPECT_EQ(test, model_reserved[DS_BTS], 0);
	KUNIT_EXPECT_EQ(test, model_reserved[DS_PEBS], 0);
	KUNIT_EXPECT_EQ(test, ds_set_model(NULL), 0);

	if (model) {
		for_each_possible_cpu(cpu) {
			KUNIT_EXPECT_EQ(test, model[cpu].ctl[DS_BTS], 0);
			KUNIT_EXPECT_EQ(test, model[cpu].ctl[DS_PEBS], 0);
			/* Counters a tracer left armed do not outlive it. */
			KUNIT_EXPECT_EQ(test, model[cpu].pebs_enable, 0);
			kfree(model[cpu].ds);
		}
	}
	kfree(model);
	model = NULL;
}

/*
 * Cases.
 */

static void test_no_hardware(struct kunit *test)
{
	struct ds_config cfg = config(test, DS_BTS, 4, DS_TRACE_USER);
	struct ds_tracer *t;

	model_supported[DS_BTS] = false;
	model_supported[DS_PEBS] = false;

	t = request(test, DS_BTS, current, -1, &cfg);
	KUNIT_EXPECT_EQ(test, PTR_ERR(t), -EOPNOTSUPP);
	t = request(test, DS_BTS, NULL, ctx_of(test)->cpu, &cfg);
	KUNIT_EXPECT_EQ(test, PTR_ERR(t), -EOPNOTSUPP);
	t = request(test, DS_PEBS, current, -1, &cfg);
	KUNIT_EXPECT_EQ(test, PTR_ERR(t), -EOPNOTSUPP);
	/* Even a bad request: there is nothing to ask for. */
	t = request(test, DS_BTS, current, -1, NULL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(t), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, ds_record_size(DS_BTS), -EOPNOTSUPP);

	KUNIT_EXPECT_EQ(test, model_reserved[DS_BTS], 0);
	KUNIT_EXPECT_EQ(test, this_ctl(DS_BTS), 0);
	KUNIT_EXPECT_FALSE(test, test_thread_flag(TIF_DS));
}

static void test_real_hardware_absent(struct kunit *test)
{
	struct ds_config cfg = config(test, DS_BTS, 4, DS_TRACE_USER);
	struct ds_tracer *t;

	if (boot_cpu_has(X86_FEATURE_BTS) || boot_cpu_has(X86_FEATURE_PEBS))
		kunit_skip(test, "this cpu has BTS or PEBS");

	KUNIT_ASSERT_EQ(test, ds_set_model(NULL), 0);
	t = request(test, DS_BTS, current, -1, &cfg);
	KUNIT_EXPECT_EQ(test, PTR_ERR(t), -EOPNOTSUPP);
	t = request(test, DS_BTS, NULL, ctx_of(test)->cpu, &cfg);
	KUNIT_EXPECT_EQ(test, PTR_ERR(t), -EOPNOTSUPP);
	t = request(test, DS_PEBS, NULL, ctx_of(test)->cpu, &cfg);
	KUNIT_EXPECT_EQ(test, PTR_ERR(t), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, ds_record_size(DS_PEBS), -EOPNOTSUPP);
	KUNIT_EXPECT_FALSE(test, test_thread_flag(TIF_DS));
	KUNIT_EXPECT_EQ(test, ds_set_model(&model_hw), 0);
}

/* A call into it is a branch the hardware must record. */
static noinline int real_target(int x)
{
	return x * 3 + 1;
}

#define REAL_CALLS		4
/*
 * Branches traced before the calls: enough to fill the window a dozen
 * times, so that the calls come after as many overflow interrupts.
 */
#define REAL_WARMUP_CALLS	16384

/* A branch of the warm-up, not counted as a call of real_target(). */
static noinline int real_warmup(int x)
{
	return x ^ 5;
}

/*
 * The trace holds all the kernel does in the meantime: on a debug kernel,
 * lockdep's first sight of a lock in the NMI handler and the printk of
 * "NMI handler took too long" alone are some 250000 branches, and on a
 * busy emulator host, where the guest's interrupts and their printks come
 * many times as often per instruction, 1.5 million were seen before the
 * first call.  Room for 2.8 million.
 */
#define REAL_BUFFER_SIZE	(64 * 1024 * 1024)

/* A call of @fn: a branch to its entry (or just past an endbr). */
static bool real_calls(const struct ds_bts_record *rec, int (*fn)(int))
{
	unsigned long entry = (unsigned long)fn;

	return rec->to >= entry && rec->to < entry + 16;
}

static void real_full(struct ds_tracer *t, void *data)
{
}

static void real_vfree(void *buf)
{
	vfree(buf);
}

/* perf's BTS event: every user-mode branch, as perf record -e branches. */
static struct perf_event *real_perf_bts(void)
{
	struct perf_event_attr attr = {
		.type		= PERF_TYPE_HARDWARE,
		.config		= PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
		.size		= sizeof(attr),
		.sample_period	= 1,
		.exclude_kernel	= 1,
		.disabled	= 1,
	};

	return perf_event_create_kernel_counter(&attr, -1, current, NULL, NULL);
}

static bool real_has_bts(void)
{
	return boot_cpu_has(X86_FEATURE_BTS) && boot_cpu_has(X86_FEATURE_DTES64);
}

/*
 * On a cpu with BTS (the QEMU model, or real hardware), the real hardware
 * layer records the kernel's own branches into the tracer's buffer.
 */
static void test_real_hardware_kernel(struct kunit *test)
{
	int (*warmup)(int) = real_warmup;
	int (*target)(int) = real_target;
	const struct ds_bts_record *rec;
	/*
	 * A linear buffer keeps the first records and drops the rest: what
	 * runs after the calls must not overwrite them.
	 */
	struct ds_config cfg = {
		.size		= rounddown(REAL_BUFFER_SIZE, DS_BTS_RECORD_SIZE),
		.overflow	= real_full,
		.flags		= DS_TRACE_KERNEL,
	};
	int calls = 0, warmups = 0, user = 0;
	unsigned long first_from = 0;
	size_t i, index, end;
	struct ds_tracer *t;
	u64 lost;

	if (!real_has_bts())
		kunit_skip(test, "this cpu has no BTS");

	cfg.base = vzalloc(REAL_BUFFER_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, cfg.base);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, real_vfree,
							cfg.base), 0);
	KUNIT_ASSERT_EQ(test, ds_set_model(NULL), 0);

	/* Real calls, not inlined or folded away. */
	OPTIMIZER_HIDE_VAR(warmup);
	OPTIMIZER_HIDE_VAR(target);
	t = request_ok(test, DS_BTS, current, -1, &cfg);
	/*
	 * Each overflow is drained by the NMI; drained from an interrupt
	 * instead, its entry and exit refill the window on a debug kernel,
	 * and the buffer fills with interrupts before the calls.
	 */
	for (i = 0; i < REAL_WARMUP_CALLS; i++)
		warmup(i);
	for (i = 0; i < REAL_CALLS; i++)
		target(i);
	KUNIT_ASSERT_EQ(test, ds_suspend(t), 0);
	KUNIT_ASSERT_EQ(test, ds_flush(t), 0);

	KUNIT_ASSERT_EQ(test, ds_get_index(t, &index), 0);
	KUNIT_ASSERT_EQ(test, ds_get_end(t, &end), 0);
	for (i = 0; i < end; i++) {
		KUNIT_ASSERT_EQ(test, ds_access(t, i, (const void **)&rec), 0);
		/* Escapes, and what the buffer held before (zeroes). */
		if (rec->from == DS_BTS_ESCAPE || (!rec->from && !rec->to))
			continue;
		if (!first_from)
			first_from = rec->from;
		if (real_calls(rec, real_target))
			calls++;
		if (real_calls(rec, real_warmup))
			warmups++;
		if (rec->from < TASK_SIZE_MAX || rec->to < TASK_SIZE_MAX)
			user++;
	}
	KUNIT_ASSERT_EQ(test, ds_get_lost(t, &lost), 0);
	/*
	 * Some are lost between reaching the threshold and the drain: on a
	 * debug kernel under PTI, whose NMI entry is itself traced, more
	 * than half of them in some runs.  A quarter still shows that the
	 * windows reach the buffer.
	 */
	KUNIT_EXPECT_GE_MSG(test, warmups, REAL_WARMUP_CALLS / 4,
			    "%zu records, index %zu, %llu lost, first %pS",
			    end, index, lost, (void *)first_from);
	KUNIT_EXPECT_GE_MSG(test, calls, REAL_CALLS,
			    "%zu records, index %zu, %llu lost, first %pS",
			    end, index, lost, (void *)first_from);
	KUNIT_EXPECT_EQ_MSG(test, user, 0, "user branches in a kernel trace");
	release(test, t);
}

/* On a cpu with BTS, the half is perf's or ds.c's, never both. */
static void test_real_hardware_perf(struct kunit *test)
{
	struct ds_config cfg = {
		.base	= buffer(test),
		.size	= rounddown(PAGE_SIZE, DS_BTS_RECORD_SIZE),
		.flags	= DS_TRACE_USER,
	};
	struct perf_event *event;
	struct ds_tracer *t;

	if (!real_has_bts())
		kunit_skip(test, "this cpu has no BTS");
	KUNIT_ASSERT_EQ(test, ds_set_model(NULL), 0);

	/* While ds.c has BTS, perf's BTS users fail. */
	t = request_ok(test, DS_BTS, current, -1, &cfg);
	event = real_perf_bts();
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(event), -EBUSY);
	if (!IS_ERR(event))
		perf_event_release_kernel(event);
	release(test, t);

	/* While perf has it, ds.c's requests fail. */
	event = real_perf_bts();
	if (IS_ERR(event))
		kunit_skip(test, "perf offers no BTS event here: %ld",
			   PTR_ERR(event));
	t = request(test, DS_BTS, current, -1, &cfg);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(t), -EBUSY);
	perf_event_release_kernel(event);
}

/* perf's claim of an LBR, BTS or PT slot @what fails; undone if not. */
static void exclusive_busy(struct kunit *test, unsigned int what)
{
	int err = x86_add_exclusive(what);

	KUNIT_EXPECT_EQ_MSG(test, err, -EBUSY, "exclusive %u", what);
	if (!err)
		x86_del_exclusive(what);
}

/*
 * Whether PT works beside LBR and BTS on this cpu (x86_pmu.lbr_pt_coexist,
 * Goldmont and Skylake on): then x86_add_exclusive() never refuses PT.
 */
static bool real_pt_coexists(void)
{
	bool coexists;

	if (x86_add_exclusive(x86_lbr_exclusive_lbr))
		return false;
	coexists = !x86_add_exclusive(x86_lbr_exclusive_pt);
	if (coexists)
		x86_del_exclusive(x86_lbr_exclusive_pt);
	x86_del_exclusive(x86_lbr_exclusive_lbr);
	return coexists;
}

/*
 * BTS and LBR do not work together, nor does PT with either on cpus before
 * Goldmont and Skylake (perf makes their users exclusive with
 * x86_add_exclusive()): while perf has such users, ds.c gets no BTS, and
 * while ds.c has BTS tracers, perf gets none of them.
 */
static void test_real_hardware_exclusive(struct kunit *test)
{
	struct ds_config cfg = {
		.base	= buffer(test),
		.size	= rounddown(PAGE_SIZE, DS_BTS_RECORD_SIZE),
		.flags	= DS_TRACE_USER,
	};
	struct ds_tracer *t;
	unsigned int what;
	bool pt_coexists;

	if (!real_has_bts())
		kunit_skip(test, "this cpu has no BTS");
	KUNIT_ASSERT_EQ(test, ds_set_model(NULL), 0);
	pt_coexists = real_pt_coexists();

	for (what = x86_lbr_exclusive_lbr; what < x86_lbr_exclusive_max;
	     what++) {
		if (what == x86_lbr_exclusive_bts ||
		    (what == x86_lbr_exclusive_pt && pt_coexists))
			continue;
		KUNIT_ASSERT_EQ(test, x86_add_exclusive(what), 0);
		t = request(test, DS_BTS, current, -1, &cfg);
		KUNIT_EXPECT_EQ_MSG(test, PTR_ERR_OR_ZERO(t), -EBUSY,
				    "exclusive %u", what);
		if (!IS_ERR(t))
			release(test, t);
		x86_del_exclusive(what);
		KUNIT_EXPECT_FALSE(test, test_thread_flag(TIF_DS));
	}

	t = request_ok(test, DS_BTS, current, -1, &cfg);
	exclusive_busy(test, x86_lbr_exclusive_lbr);
	if (!pt_coexists)
		exclusive_busy(test, x86_lbr_exclusive_pt);
	release(test, t);

	/* Given back with the last tracer. */
	KUNIT_EXPECT_EQ(test, x86_add_exclusive(x86_lbr_exclusive_lbr), 0);
	x86_del_exclusive(x86_lbr_exclusive_lbr);
}

static void test_request_release(struct kunit *test)
{
	struct ds_config cfg = config(test, DS_BTS, 4,
				      DS_TRACE_USER | DS_TRACE_KERNEL);
	int cpu = ctx_of(test)->cpu;
	struct ds_tracer *t;
	size_t end = 0;
	struct ds_fields *f;

	KUNIT_EXPECT_EQ(test, ds_record_size(DS_BTS), DS_BTS_RECORD_SIZE);

	t = request_ok(test, DS_BTS, NULL, cpu, &cfg);
	KUNIT_EXPECT_EQ(test, model_reserved[DS_BTS], 1);
	KUNIT_EXPECT_EQ(test, ds_nr_users(DS_BTS), 1);
	KUNIT_EXPECT_EQ(test, this_ctl(DS_BTS), DS_CTL_ON | DS_CTL_INT |
			DS_CTL_USER | DS_CTL_KERNEL);
	KUNIT_EXPECT_EQ(test, ds_get_end(t, &end), 0);
	KUNIT_EXPECT_EQ(test, end, 4);

	/* The hardware writes the window, not the tracer's buffer. */
	f = ds_area_fields(model[cpu].ds, DS_BTS);
	KUNIT_EXPECT_EQ(test, f->base,
			(u64)(unsigned long)model[cpu].window[DS_BTS]);
	KUNIT_EXPECT_EQ(test, f->index, f->base);
	KUNIT_EXPECT_EQ(test, f->max,
			f->base + MODEL_WINDOW_RECORDS * DS_BTS_RECORD_SIZE);
	KUNIT_EXPECT_LT(test, f->threshold, f->max);
	KUNIT_EXPECT_GT(test, f->threshold, f->base);

	emit_user(1);
	release(test, t);
	/* Released: stopped, the record delivered, perf's fields back. */
	KUNIT_EXPECT_EQ(test, this_ctl(DS_BTS), 0);
	KUNIT_EXPECT_EQ(test, ((struct ds_bts_record *)cfg.base)->from,
			USER_IP(1));
	KUNIT_EXPECT_EQ(test, model_reserved[DS_BTS], 0);
	KUNIT_EXPECT_EQ(test, f->base, MODEL_PERF_SENTINEL);
	KUNIT_EXPECT_EQ(test, f->threshold,
			MODEL_PERF_SENTINEL + 3);
}

static void test_invalid(struct kunit *test)
{
	struct ds_config good = config(test, DS_BTS, 4, DS_TRACE_USER);
	int cpu = ctx_of(test)->cpu;
	struct ds_config cfg;
	struct ds_tracer *t;
	const void *rec;
	u64 value;

	KUNIT_EXPECT_EQ(test, PTR_ERR(request(test, DS_BTS, current, -1, NULL)),
			-EINVAL);

#define EXPECT_INVALID(task, cpu, change) do {				\
		cfg = good;						\
		change;							\
		t = request(test, DS_BTS, task, cpu, &cfg);		\
		KUNIT_EXPECT_EQ_MSG(test, PTR_ERR(t), -EINVAL, #change); \
	} while (0)

	EXPECT_INVALID(current, -1, cfg.flags = 0);
	/* Switch records alone are for a task, not for a cpu. */
	EXPECT_INVALID(NULL, cpu, cfg.flags = DS_TIMESTAMPS);
	EXPECT_INVALID(current, -1, cfg.flags |= BIT(7));
	EXPECT_INVALID(current, -1, cfg.base = NULL);
	EXPECT_INVALID(current, -1, cfg.base += 8);
	EXPECT_INVALID(current, -1, cfg.size = 0);
	EXPECT_INVALID(current, -1, cfg.size -= 1);
	EXPECT_INVALID(current, -1, cfg.threshold = 1);
	EXPECT_INVALID(current, -1, (cfg.overflow = test_overflow,
				     cfg.threshold = 4));
	EXPECT_INVALID(current, cpu, (void)0);
	EXPECT_INVALID(NULL, -1, (void)0);
	EXPECT_INVALID(NULL, nr_cpu_ids, (void)0);
	/* Timestamps are for per-task BTS tracers only. */
	EXPECT_INVALID(NULL, cpu, cfg.flags |= DS_TIMESTAMPS);
	cfg = good;
	cfg.flags |= DS_TIMESTAMPS;
	cfg.size = 4 * MODEL_PEBS_RSZ;
	t = request(test, DS_PEBS, current, -1, &cfg);
	KUNIT_EXPECT_EQ(test, PTR_ERR(t), -EINVAL);
#undef EXPECT_INVALID

	/* Bad requests changed nothing. */
	KUNIT_EXPECT_EQ(test, model_reserved[DS_BTS], 0);
	KUNIT_EXPECT_EQ(test, model_reserved[DS_PEBS], 0);
	KUNIT_EXPECT_EQ(test, ds_nr_users(DS_BTS), 0);
	KUNIT_EXPECT_FALSE(test, test_thread_flag(TIF_DS));
	KUNIT_EXPECT_EQ(test, this_ctl(DS_BTS), 0);

	/* Bad arguments to a good tracer. */
	t = request_ok(test, DS_BTS, current, -1, &good);
	KUNIT_EXPECT_EQ(test, ds_access(t, 4, &rec), -EINVAL);
	KUNIT_EXPECT_EQ(test, ds_write(t, good.base, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, ds_write(t, good.base, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, ds_set_pebs_reset(t, 0, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, ds_get_pebs_reset(t, 0, &value), -EINVAL);
	KUNIT_EXPECT_EQ(test, ds_get_index(t, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, ds_release(NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, ds_release(ERR_PTR(-EINVAL)), -EINVAL);
	KUNIT_EXPECT_EQ(test, ds_record_size(DS_NR_HALVES), -EINVAL);
	KUNIT_EXPECT_EQ(test, index_of(test, t), 0);
	release(test, t);
}

static void test_busy(struct kunit *test)
{
	struct ds_config cfg = config(test, DS_BTS, 4, DS_TRACE_USER);
	struct ds_config pebs = config(test, DS_PEBS, 4, DS_TRACE_USER);
	int cpu = ctx_of(test)->cpu;
	struct ds_tracer *t;

	request_ok(test, DS_BTS, current, -1, &cfg);
	t = request(test, DS_BTS, current, -1, &cfg);
	KUNIT_EXPECT_EQ(test, PTR_ERR(t), -EBUSY);

	request_ok(test, DS_BTS, NULL, cpu, &cfg);
	t = request(test, DS_BTS, NULL, cpu, &cfg);
	KUNIT_EXPECT_EQ(test, PTR_ERR(t), -EBUSY);

	/* The other half is free. */
	request_ok(test, DS_PEBS, current, -1, &pebs);
	request_ok(test, DS_PEBS, NULL, cpu, &pebs);
	KUNIT_EXPECT_EQ(test, ds_nr_users(DS_BTS), 2);
	KUNIT_EXPECT_EQ(test, ds_nr_users(DS_PEBS), 2);
	/* Borrowed from perf once per half. */
	KUNIT_EXPECT_EQ(test, model_reserved[DS_BTS], 1);
	KUNIT_EXPECT_EQ(test, model_reserved[DS_PEBS], 1);
}

/* perf's claim of @half fails; one that does not is undone for the next. */
static void perf_get_busy(struct kunit *test, enum ds_half half)
{
	int err = ds_perf_get(half);

	KUNIT_EXPECT_EQ_MSG(test, err, -EBUSY, "half %d", half);
	if (!err)
		ds_perf_put(half);
}

/* perf's claim of @half succeeds; it is given back at once. */
static void perf_get_free(struct kunit *test, enum ds_half half)
{
	int err = ds_perf_get(half);

	KUNIT_EXPECT_EQ_MSG(test, err, 0, "half %d", half);
	if (!err)
		ds_perf_put(half);
}

static void test_perf_holds_half(struct kunit *test)
{
	struct ds_config cfg = config(test, DS_BTS, 4, DS_TRACE_USER);
	struct ds_config pebs = config(test, DS_PEBS, 4, DS_TRACE_USER);
	int cpu = ctx_of(test)->cpu;
	struct ds_tracer *t, *p;

	/* perf uses BTS: ds.c's BTS requests fail, PEBS ones do not. */
	KUNIT_ASSERT_EQ(test, ds_perf_get(DS_BTS), 0);
	t = request(test, DS_BTS, current, -1, &cfg);
	KUNIT_EXPECT_EQ(test, PTR_ERR(t), -EBUSY);
	t = request(test, DS_BTS, NULL, cpu, &cfg);
	KUNIT_EXPECT_EQ(test, PTR_ERR(t), -EBUSY);
	KUNIT_EXPECT_EQ(test, model_reserved[DS_BTS], 0);
	KUNIT_EXPECT_FALSE(test, test_thread_flag(TIF_DS));
	p = request(test, DS_PEBS, NULL, cpu, &pebs);
	ds_perf_put(DS_BTS);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(p), "request: %ld", PTR_ERR(p));

	/* ds.c uses BTS: perf's BTS users fail until it is released. */
	t = request_ok(test, DS_BTS, NULL, cpu, &cfg);
	perf_get_busy(test, DS_BTS);
	perf_get_busy(test, DS_PEBS);
	release(test, p);
	perf_get_free(test, DS_PEBS);
	release(test, t);
	perf_get_free(test, DS_BTS);
}

/* ds_replace() with the test's bookkeeping of tracers to release. */
static struct ds_tracer *replace(struct kunit *test, struct ds_tracer *old,
				 const struct ds_config *cfg)
{
	struct x86_ds_ctx *ctx = ctx_of(test);
	struct ds_tracer *t = ds_replace(old, cfg);
	int i;

	if (IS_ERR(t))
		return t;
	for (i = 0; i < MAX_TRACERS; i++) {
		if (ctx->tracers[i] == old)
			ctx->tracers[i] = t;
	}
	return t;
}

static void test_replace(struct kunit *test)
{
	struct ds_config soft = config(test, DS_BTS, 4, DS_TIMESTAMPS);
	struct ds_config cfg = config(test, DS_BTS, 4, DS_TRACE_USER);
	struct ds_config cfg2 = config(test, DS_BTS, 8, DS_TRACE_USER);
	struct ds_config bad = cfg2;
	int cpu = ctx_of(test)->cpu;
	struct ds_tracer *t, *n;
	size_t end = 0;

	/* Nothing to replace. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(ds_replace(NULL, &cfg)), -EINVAL);

	/* Switch records to branches while perf has BTS: the old one stays. */
	t = request_ok(test, DS_BTS, current, -1, &soft);
	KUNIT_ASSERT_EQ(test, ds_perf_get(DS_BTS), 0);
	n = replace(test, t, &cfg);
	ds_perf_put(DS_BTS);
	KUNIT_EXPECT_EQ(test, PTR_ERR(n), -EBUSY);
	KUNIT_EXPECT_TRUE(test, test_thread_flag(TIF_DS));
	KUNIT_EXPECT_EQ(test, model_reserved[DS_BTS], 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR(request(test, DS_BTS, current, -1, &soft)),
			-EBUSY);
	KUNIT_EXPECT_EQ(test, ds_get_end(t, &end), 0);
	KUNIT_EXPECT_EQ(test, end, 4);
	release(test, t);
	KUNIT_EXPECT_FALSE(test, test_thread_flag(TIF_DS));

	/*
	 * A cpu tracer to a bigger buffer: the half stays borrowed (perf
	 * could not get it back now), the old records stay in the old
	 * buffer and the new ones go to the new.
	 */
	t = request_ok(test, DS_BTS, NULL, cpu, &cfg);
	emit_user(1);
	model_reserve_err = -EBUSY;
	bad.base = (u8 *)bad.base + 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR(replace(test, t, &bad)), -EINVAL);
	n = replace(test, t, &cfg2);
	model_reserve_err = 0;
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(n), "replace: %ld", PTR_ERR(n));
	KUNIT_EXPECT_EQ(test, model_reserved[DS_BTS], 1);
	KUNIT_EXPECT_EQ(test, ds_nr_users(DS_BTS), 1);
	KUNIT_EXPECT_EQ(test, ((struct ds_bts_record *)cfg.base)->from,
			USER_IP(1));
	KUNIT_EXPECT_EQ(test, index_of(test, n), 0);
	KUNIT_EXPECT_EQ(test, ds_get_end(n, &end), 0);
	KUNIT_EXPECT_EQ(test, end, 8);
	KUNIT_EXPECT_EQ(test, this_ctl(DS_BTS), DS_CTL_ON | DS_CTL_INT |
			DS_CTL_USER);
	emit_user(2);
	KUNIT_EXPECT_EQ(test, ds_flush(n), 0);
	KUNIT_EXPECT_EQ(test, index_of(test, n), 1);
	expect_bts(test, n, 0, USER_IP(2), USER_IP(2 + 0x1000));
	KUNIT_EXPECT_EQ(test, ((struct ds_bts_record *)cfg.base)[1].from, 0);

	/* Branches to switch records alone: the half goes back to perf. */
	soft.flags = DS_TIMESTAMPS;
	release(test, n);
	t = request_ok(test, DS_BTS, current, -1, &cfg);
	n = replace(test, t, &soft);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(n), "replace: %ld", PTR_ERR(n));
	KUNIT_EXPECT_EQ(test, model_reserved[DS_BTS], 0);
	KUNIT_EXPECT_TRUE(test, test_thread_flag(TIF_DS));
	release(test, n);
	KUNIT_EXPECT_FALSE(test, test_thread_flag(TIF_DS));
}

static void emit_u2_k2(struct on_cpu *oc)
{
	emit_user(2);
	emit_kernel(2);
}

static void test_task_and_cpu(struct kunit *test)
{
	struct ds_config ccfg = config(test, DS_BTS, 16,
				       DS_TRACE_USER | DS_TRACE_KERNEL);
	struct ds_config tcfg = config(test, DS_BTS, 16, DS_TRACE_USER);
	int cpu = ctx_of(test)->cpu;
	struct ds_tracer *ct, *tt;
	struct task_struct *k;
	struct on_cpu oc;

	ct = request_ok(test, DS_BTS, NULL, cpu, &ccfg);
	tt = request_ok(test, DS_BTS, current, -1, &tcfg);
	KUNIT_EXPECT_TRUE(test, test_thread_flag(TIF_DS));

	emit_user(1);
	emit_kernel(1);

	/* Another task runs on this cpu: the cpu's, not this task's. */
	k = create_on_cpu(test, &oc, emit_u2_k2);
	wake_up_process(k);
	finish_on_cpu(test, k, &oc);

	emit_user(3);
	KUNIT_EXPECT_EQ(test, ds_flush(tt), 0);
	KUNIT_EXPECT_EQ(test, ds_flush(ct), 0);

	/* The task's tracer: this task's user branches. */
	KUNIT_EXPECT_EQ(test, index_of(test, tt), 2);
	expect_bts(test, tt, 0, USER_IP(1), USER_IP(0x1001));
	expect_bts(test, tt, 1, USER_IP(3), USER_IP(0x1003));

	/* The cpu's tracer: everything on the cpu, in order. */
	KUNIT_EXPECT_EQ(test, index_of(test, ct), 5);
	expect_bts(test, ct, 0, USER_IP(1), USER_IP(0x1001));
	expect_bts(test, ct, 1, KERNEL_IP(1), KERNEL_IP(0x1001));
	expect_bts(test, ct, 2, USER_IP(2), USER_IP(0x1002));
	expect_bts(test, ct, 3, KERNEL_IP(2), KERNEL_IP(0x1002));
	expect_bts(test, ct, 4, USER_IP(3), USER_IP(0x1003));

	release(test, tt);
	KUNIT_EXPECT_FALSE(test, test_thread_flag(TIF_DS));
	/* The cpu tracer goes on alone. */
	KUNIT_EXPECT_EQ(test, this_ctl(DS_BTS), DS_CTL_ON | DS_CTL_INT |
			DS_CTL_USER | DS_CTL_KERNEL);
}

static void test_filter(struct kunit *test)
{
	struct ds_config tcfg = config(test, DS_BTS, 16, DS_TRACE_USER);
	struct ds_config ccfg = config(test, DS_BTS, 16, DS_TRACE_KERNEL);
	int cpu = ctx_of(test)->cpu;
	struct ds_tracer *ct, *tt;

	/* Alone, the user-only tracer lets the hardware filter. */
	tt = request_ok(test, DS_BTS, current, -1, &tcfg);
	KUNIT_EXPECT_EQ(test, this_ctl(DS_BTS),
			DS_CTL_ON | DS_CTL_INT | DS_CTL_USER);
	emit_kernel(1);
	emit_user(1);

	/* With a kernel-only cpu tracer the hardware traces both. */
	ct = request_ok(test, DS_BTS, NULL, cpu, &ccfg);
	KUNIT_EXPECT_EQ(test, this_ctl(DS_BTS), DS_CTL_ON | DS_CTL_INT |
			DS_CTL_USER | DS_CTL_KERNEL);
	/* A system call: from user mode into the kernel. */
	model_emit(DS_BTS, false, USER_IP(2), KERNEL_IP(2));
	emit_kernel(3);
	emit_user(4);
	ds_flush(tt);

	KUNIT_EXPECT_EQ(test, index_of(test, tt), 3);
	expect_bts(test, tt, 0, USER_IP(1), USER_IP(0x1001));
	/* The kernel address is not the user tracer's to see. */
	expect_bts(test, tt, 1, USER_IP(2), 0);
	expect_bts(test, tt, 2, USER_IP(4), USER_IP(0x1004));

	KUNIT_EXPECT_EQ(test, index_of(test, ct), 1);
	expect_bts(test, ct, 0, KERNEL_IP(3), KERNEL_IP(0x1003));
}

static void test_wrap(struct kunit *test)
{
	struct ds_config cfg = config(test, DS_BTS, 4, DS_TRACE_USER);
	struct ds_tracer *t;
	u64 lost = 1;
	int i;

	t = request_ok(test, DS_BTS, NULL, ctx_of(test)->cpu, &cfg);
	for (i = 0; i < 6; i++)
		emit_user(i);
	ds_flush(t);

	/* Circular: the two newest overwrote the two oldest. */
	KUNIT_EXPECT_EQ(test, index_of(test, t), 2);
	expect_bts(test, t, 0, USER_IP(4), USER_IP(0x1004));
	expect_bts(test, t, 1, USER_IP(5), USER_IP(0x1005));
	expect_bts(test, t, 2, USER_IP(2), USER_IP(0x1002));
	expect_bts(test, t, 3, USER_IP(3), USER_IP(0x1003));
	KUNIT_EXPECT_EQ(test, ds_get_lost(t, &lost), 0);
	KUNIT_EXPECT_EQ(test, lost, 0);
}

static void test_overflow_callback(struct kunit *test)
{
	struct ds_config cfg = config(test, DS_BTS, 4, DS_TRACE_USER);
	struct x86_ds_ctx *ctx = ctx_of(test);
	struct ds_tracer *t;
	u64 lost = 0;
	int i;

	cfg.overflow = test_overflow;
	cfg.data = ctx;
	cfg.threshold = 1;
	t = request_ok(test, DS_BTS, NULL, ctx->cpu, &cfg);

	for (i = 0; i < 2; i++)
		emit_user(i);
	ds_flush(t);
	msleep(20);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->overflows), 0);

	/* The third record reaches the threshold, one before the end. */
	emit_user(2);
	ds_flush(t);
	msleep(20);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->overflows), 1);
	KUNIT_EXPECT_PTR_EQ(test, ctx->overflow_data, (void *)ctx);

	/* Linear: full after four, then records are dropped, counted. */
	emit_user(3);
	emit_user(4);
	ds_flush(t);
	KUNIT_EXPECT_EQ(test, index_of(test, t), 4);
	expect_bts(test, t, 3, USER_IP(3), USER_IP(0x1003));
	KUNIT_EXPECT_EQ(test, ds_get_lost(t, &lost), 0);
	KUNIT_EXPECT_EQ(test, lost, 1);
	msleep(20);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->overflows), 1);

	/* A reset arms the callback again. */
	KUNIT_EXPECT_EQ(test, ds_reset(t), 0);
	for (i = 5; i < 8; i++)
		emit_user(i);
	ds_flush(t);
	msleep(20);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->overflows), 2);
	expect_bts(test, t, 0, USER_IP(5), USER_IP(0x1005));
}

/*
 * An overflow still to be reported when the buffer is reset is gone: the
 * callback does not run for it (a debugger would be told of a full buffer
 * it has just emptied).
 */
static void test_overflow_reset_before_callback(struct kunit *test)
{
	struct ds_config cfg = config(test, DS_BTS, 4, DS_TRACE_USER);
	struct x86_ds_ctx *ctx = ctx_of(test);
	struct ds_bts_record recs[4] = { };
	struct ds_tracer *t;

	cfg.overflow = test_overflow;
	cfg.data = ctx;
	t = request_ok(test, DS_BTS, NULL, ctx->cpu, &cfg);

	/* The irq_work that calls back cannot run before interrupts are on. */
	local_irq_disable();
	KUNIT_EXPECT_EQ(test, ds_write(t, recs, sizeof(recs)), sizeof(recs));
	KUNIT_EXPECT_EQ(test, ds_clear(t), 0);
	local_irq_enable();
	msleep(20);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->overflows), 0);

	local_irq_disable();
	KUNIT_EXPECT_EQ(test, ds_write(t, recs, sizeof(recs)), sizeof(recs));
	KUNIT_EXPECT_EQ(test, ds_reset(t), 0);
	local_irq_enable();
	msleep(20);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->overflows), 0);

	/* Without a reset it comes. */
	KUNIT_EXPECT_EQ(test, ds_write(t, recs, sizeof(recs)), sizeof(recs));
	msleep(20);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->overflows), 1);
}

static void test_window_interrupt(struct kunit *test)
{
	struct ds_config cfg = config(test, DS_BTS, 64, DS_TRACE_USER);
	struct model_cpu *m = &model[ctx_of(test)->cpu];
	struct ds_tracer *t;
	int i;

	t = request_ok(test, DS_BTS, NULL, ctx_of(test)->cpu, &cfg);
	/* More than twice the window, with no drain in between. */
	for (i = 0; i < 3 * MODEL_WINDOW_RECORDS; i++)
		emit_user(i);
	KUNIT_EXPECT_GE(test, m->overflows[DS_BTS], 2);
	KUNIT_EXPECT_EQ(test, m->dropped[DS_BTS], 0);
	KUNIT_EXPECT_GE(test, model_acks, 2);
	ds_flush(t);

	KUNIT_EXPECT_EQ(test, index_of(test, t), 3 * MODEL_WINDOW_RECORDS);
	for (i = 0; i < 3 * MODEL_WINDOW_RECORDS; i++)
		expect_bts(test, t, i, USER_IP(i), USER_IP(0x1000 + i));
}

/*
 * A linear tracer's overflow callback comes at its threshold, not when a
 * whole window has been drained into it: the window interrupts early
 * when the tracer has room for fewer records than the window holds.
 */
static void test_early_window_interrupt(struct kunit *test)
{
	struct ds_config cfg = config(test, DS_BTS, 32, DS_TRACE_USER);
	struct x86_ds_ctx *ctx = ctx_of(test);
	struct model_cpu *m = &model[ctx->cpu];
	unsigned int before;
	struct ds_tracer *t;
	int i;

	cfg.overflow = test_overflow;
	cfg.data = ctx;
	cfg.threshold = 8;
	t = request_ok(test, DS_BTS, NULL, ctx->cpu, &cfg);

	/* 24 records reach the threshold; no flush to help. */
	for (i = 0; i < 24; i++)
		emit_user(i);
	msleep(20);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->overflows), 1);
	KUNIT_EXPECT_EQ(test, index_of(test, t), 24);
	KUNIT_EXPECT_EQ(test, m->dropped[DS_BTS], 0);

	/*
	 * One record short of the threshold, a record the tracer does not
	 * take (the way back to user mode, stored under one reading of a
	 * privilege crossing) does not interrupt alone: the threshold is
	 * two records at least, so the next one brings the tracer a record.
	 */
	KUNIT_EXPECT_EQ(test, ds_reset(t), 0);
	for (i = 0; i < 23; i++)
		emit_user(i);
	ds_flush(t);
	KUNIT_EXPECT_EQ(test, index_of(test, t), 23);
	before = m->overflows[DS_BTS];
	model_emit(DS_BTS, false, KERNEL_IP(1), USER_IP(1));
	KUNIT_EXPECT_EQ(test, m->overflows[DS_BTS], before);
	emit_user(23);
	KUNIT_EXPECT_EQ(test, m->overflows[DS_BTS], before + 1);
	msleep(20);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->overflows), 2);
	KUNIT_EXPECT_EQ(test, index_of(test, t), 24);
}

static void test_write_reset_clear(struct kunit *test)
{
	struct ds_config cfg = config(test, DS_BTS, 4, DS_TRACE_USER);
	struct ds_bts_record in[2] = {
		{ .from = DS_BTS_ESCAPE, .to = DS_BTS_TASK_ARRIVES, .flags = 7 },
		{ .from = USER_IP(9), .to = USER_IP(10), .flags = 0 },
	};
	struct ds_tracer *t;

	t = request_ok(test, DS_BTS, current, -1, &cfg);
	KUNIT_EXPECT_EQ(test, ds_write(t, in, sizeof(in)), sizeof(in));
	KUNIT_EXPECT_EQ(test, index_of(test, t), 2);
	KUNIT_EXPECT_EQ(test, bts(test, t, 0)->flags, 7);
	expect_bts(test, t, 1, USER_IP(9), USER_IP(10));

	/* Written records and traced ones share the buffer. */
	emit_user(1);
	ds_flush(t);
	KUNIT_EXPECT_EQ(test, index_of(test, t), 3);

	KUNIT_EXPECT_EQ(test, ds_reset(t), 0);
	KUNIT_EXPECT_EQ(test, index_of(test, t), 0);
	expect_bts(test, t, 1, USER_IP(9), USER_IP(10));

	KUNIT_EXPECT_EQ(test, ds_clear(t), 0);
	KUNIT_EXPECT_EQ(test, index_of(test, t), 0);
	expect_bts(test, t, 1, 0, 0);
	KUNIT_EXPECT_EQ(test, bts(test, t, 0)->flags, 0);
}

#define CLEAR_POISON	0xa5

/* Whether the @n bytes at @p are all @c. */
static bool all_bytes(const void *p, int c, size_t n)
{
	const u8 *b = p;

	while (n--) {
		if (*b++ != c)
			return false;
	}
	return true;
}

/*
 * ds_clear() zeroes what was written since the request or the last clear,
 * and no more: a clear of a big buffer that holds a few records costs a
 * few records, and none of it a whole buffer with interrupts off.
 */
static void test_clear_used(struct kunit *test)
{
	struct ds_config cfg = config(test, DS_BTS, 64, DS_TRACE_USER);
	struct ds_bts_record in[3] = {
		{ .from = USER_IP(1), .to = USER_IP(2) },
		{ .from = USER_IP(3), .to = USER_IP(4) },
		{ .from = USER_IP(5), .to = USER_IP(6) },
	};
	const size_t rsz = DS_BTS_RECORD_SIZE;
	struct ds_tracer *t;
	u8 *base = cfg.base;
	int i;

	memset(base, CLEAR_POISON, cfg.size);
	t = request_ok(test, DS_BTS, current, -1, &cfg);
	KUNIT_EXPECT_EQ(test, ds_write(t, in, 2 * rsz), 2 * rsz);
	KUNIT_EXPECT_EQ(test, ds_clear(t), 0);
	KUNIT_EXPECT_TRUE(test, all_bytes(base, 0, 2 * rsz));
	KUNIT_EXPECT_TRUE_MSG(test, all_bytes(base + 2 * rsz, CLEAR_POISON,
					      cfg.size - 2 * rsz),
			      "ds_clear() zeroed records never written");

	/* A reset keeps what was written for the next clear. */
	KUNIT_EXPECT_EQ(test, ds_write(t, in, 3 * rsz), 3 * rsz);
	KUNIT_EXPECT_EQ(test, ds_reset(t), 0);
	KUNIT_EXPECT_EQ(test, ds_write(t, in, rsz), rsz);
	KUNIT_EXPECT_EQ(test, ds_clear(t), 0);
	KUNIT_EXPECT_TRUE(test, all_bytes(base, 0, 3 * rsz));
	KUNIT_EXPECT_TRUE(test, all_bytes(base + 3 * rsz, CLEAR_POISON, rsz));

	/* Once wrapped, everything was written. */
	for (i = 0; i < 64 / 3 + 1; i++)
		KUNIT_EXPECT_EQ(test, ds_write(t, in, sizeof(in)), sizeof(in));
	KUNIT_EXPECT_EQ(test, ds_clear(t), 0);
	KUNIT_EXPECT_TRUE(test, all_bytes(base, 0, cfg.size));
	KUNIT_EXPECT_EQ(test, index_of(test, t), 0);
}

/* A clear of a big buffer, done in steps, clears all of it. */
static void test_clear_big(struct kunit *test)
{
	const size_t nr = SZ_4M / DS_BTS_RECORD_SIZE;
	struct ds_bts_record *in;
	struct ds_config cfg = {
		.size	= nr * DS_BTS_RECORD_SIZE,
		.flags	= DS_TRACE_USER,
	};
	struct ds_tracer *t;
	size_t i, chunk = PAGE_SIZE / DS_BTS_RECORD_SIZE;

	in = kunit_kzalloc(test, chunk * DS_BTS_RECORD_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, in);
	for (i = 0; i < chunk; i++)
		in[i].from = USER_IP(i);
	cfg.base = vzalloc(SZ_4M);
	KUNIT_ASSERT_NOT_NULL(test, cfg.base);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, real_vfree,
							cfg.base), 0);

	t = request_ok(test, DS_BTS, current, -1, &cfg);
	for (i = 0; i + chunk <= nr; i += chunk)
		KUNIT_ASSERT_EQ(test, ds_write(t, in, sizeof(*in) * chunk),
				sizeof(*in) * chunk);
	KUNIT_EXPECT_EQ(test, index_of(test, t), i);
	KUNIT_EXPECT_EQ(test, ds_clear(t), 0);
	KUNIT_EXPECT_TRUE(test, all_bytes(cfg.base, 0, cfg.size));
	release(test, t);
}

static void test_suspend_resume(struct kunit *test)
{
	struct ds_config cfg = config(test, DS_BTS, 8, DS_TRACE_USER);
	struct ds_tracer *t;

	t = request_ok(test, DS_BTS, current, -1, &cfg);
	emit_user(1);
	KUNIT_EXPECT_EQ(test, ds_suspend(t), 0);
	/* Suspended: stopped, the records so far in the buffer. */
	KUNIT_EXPECT_EQ(test, this_ctl(DS_BTS), 0);
	KUNIT_EXPECT_EQ(test, index_of(test, t), 1);
	emit_user(2);
	msleep(20);
	KUNIT_EXPECT_EQ(test, this_ctl(DS_BTS), 0);

	KUNIT_EXPECT_EQ(test, ds_resume(t), 0);
	KUNIT_EXPECT_NE(test, this_ctl(DS_BTS), 0);
	emit_user(3);
	ds_flush(t);
	KUNIT_EXPECT_EQ(test, index_of(test, t), 2);
	expect_bts(test, t, 1, USER_IP(3), USER_IP(0x1003));
}

static void test_timestamps(struct kunit *test)
{
	struct ds_config cfg = config(test, DS_BTS, 64,
				      DS_TRACE_USER | DS_TIMESTAMPS);
	const struct ds_bts_record *rec, *dep, *arr;
	struct ds_tracer *t;
	size_t i, n;

	t = request_ok(test, DS_BTS, current, -1, &cfg);
	emit_user(1);
	/* Sleep: switched out and in again. */
	msleep(20);
	ds_flush(t);

	/* Other switches may come before; the sleep's follow the branch. */
	n = index_of(test, t);
	for (i = 0; i < n; i++) {
		rec = bts(test, t, i);
		if (rec->from == USER_IP(1))
			break;
	}
	KUNIT_ASSERT_LT(test, i + 2, n);
	dep = bts(test, t, i + 1);
	arr = bts(test, t, i + 2);
	KUNIT_EXPECT_EQ(test, dep->from, DS_BTS_ESCAPE);
	KUNIT_EXPECT_EQ(test, dep->to, DS_BTS_TASK_DEPARTS);
	KUNIT_EXPECT_EQ(test, arr->from, DS_BTS_ESCAPE);
	KUNIT_EXPECT_EQ(test, arr->to, DS_BTS_TASK_ARRIVES);
	KUNIT_EXPECT_LE(test, dep->flags, arr->flags);
}

static void test_timestamps_only(struct kunit *test)
{
	struct ds_config cfg = config(test, DS_BTS, 64, DS_TIMESTAMPS);
	const struct ds_bts_record *rec;
	struct ds_tracer *t;
	size_t i, n;

	/* Software records need no hardware and borrow nothing. */
	model_supported[DS_BTS] = false;
	model_supported[DS_PEBS] = false;

	t = request_ok(test, DS_BTS, current, -1, &cfg);
	KUNIT_EXPECT_TRUE(test, test_thread_flag(TIF_DS));
	KUNIT_EXPECT_EQ(test, model_reserved[DS_BTS], 0);
	KUNIT_EXPECT_EQ(test, ds_nr_users(DS_BTS), 0);
	KUNIT_EXPECT_EQ(test, this_ctl(DS_BTS), 0);
	msleep(20);

	/* Departures and arrivals alternate, in time order. */
	n = index_of(test, t);
	KUNIT_ASSERT_GE(test, n, 2);
	for (i = 0; i < n; i++) {
		rec = bts(test, t, i);
		KUNIT_EXPECT_EQ(test, rec->from, DS_BTS_ESCAPE);
		KUNIT_EXPECT_EQ(test, rec->to, i % 2 ? DS_BTS_TASK_ARRIVES :
			       DS_BTS_TASK_DEPARTS);
		if (i)
			KUNIT_EXPECT_LE(test, bts(test, t, i - 1)->flags,
					rec->flags);
	}

	/* A second tracer of the task is refused like any other. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(request(test, DS_BTS, current, -1, &cfg)),
			-EBUSY);
	release(test, t);
	KUNIT_EXPECT_FALSE(test, test_thread_flag(TIF_DS));
	KUNIT_EXPECT_EQ(test, model_reserved[DS_BTS], 0);
}

static void emit_and_exit(struct on_cpu *oc)
{
	emit_user(1);
	emit_user(2);
}

static void test_exit(struct kunit *test)
{
	struct ds_config cfg = config(test, DS_BTS, 8, DS_TRACE_USER);
	unsigned long timeout;
	struct task_struct *k;
	struct ds_tracer *t;
	struct on_cpu oc;

	k = create_on_cpu(test, &oc, emit_and_exit);
	get_task_struct(k);
	t = request_ok(test, DS_BTS, k, -1, &cfg);
	KUNIT_EXPECT_TRUE(test, test_tsk_thread_flag(k, TIF_DS));
	wake_up_process(k);
	finish_on_cpu(test, k, &oc);

	/* kthread_stop() returns before the exit reaches exit_thread(). */
	timeout = jiffies + 5 * HZ;
	while (ds_resume(t) != -ESRCH && time_before(jiffies, timeout))
		msleep(20);

	/* Detached: its records kept, nothing of it left in the task. */
	KUNIT_EXPECT_EQ(test, ds_resume(t), -ESRCH);
	KUNIT_EXPECT_EQ(test, ds_suspend(t), -ESRCH);
	KUNIT_EXPECT_FALSE(test, test_tsk_thread_flag(k, TIF_DS));
	KUNIT_EXPECT_NULL(test, k->thread.ds_tracers[DS_BTS]);
	KUNIT_EXPECT_EQ(test, index_of(test, t), 2);
	expect_bts(test, t, 1, USER_IP(2), USER_IP(0x1002));
	KUNIT_EXPECT_EQ(test, ds_flush(t), 0);
	put_task_struct(k);

	release(test, t);
	KUNIT_EXPECT_EQ(test, model_reserved[DS_BTS], 0);
}

static void do_nothing(struct on_cpu *oc)
{
}

static void test_request_exiting(struct kunit *test)
{
	struct ds_config cfg = config(test, DS_BTS, 8, DS_TRACE_USER);
	struct ds_config pebs = config(test, DS_PEBS, 8, DS_TRACE_USER);
	struct task_struct *k;
	struct on_cpu oc;

	k = create_on_cpu(test, &oc, do_nothing);
	get_task_struct(k);
	wake_up_process(k);
	/* kthread_stop() returns once the thread is in do_exit(). */
	finish_on_cpu(test, k, &oc);
	KUNIT_ASSERT_TRUE(test, k->flags & PF_EXITING);

	KUNIT_EXPECT_EQ(test, PTR_ERR(request(test, DS_BTS, k, -1, &cfg)),
			-ESRCH);
	KUNIT_EXPECT_EQ(test, PTR_ERR(request(test, DS_PEBS, k, -1, &pebs)),
			-ESRCH);
	/* Refused: nothing borrowed from perf, nothing left in the task. */
	KUNIT_EXPECT_EQ(test, model_reserved[DS_BTS], 0);
	KUNIT_EXPECT_EQ(test, model_reserved[DS_PEBS], 0);
	KUNIT_EXPECT_EQ(test, ds_nr_users(DS_BTS), 0);
	KUNIT_EXPECT_FALSE(test, test_tsk_thread_flag(k, TIF_DS));
	KUNIT_EXPECT_NULL(test, k->thread.ds_tracers[DS_BTS]);
	put_task_struct(k);
}

struct exec_check {
	struct kunit *test;
	struct ds_config cfg;
	struct ds_tracer *tracer;
};

/* In the new task, before it executes the program. */
static int exec_init(struct subprocess_info *info, struct cred *new)
{
	struct exec_check *ec = info->data;

	ec->tracer = request(ec->test, DS_BTS, current, -1, &ec->cfg);
	return PTR_ERR_OR_ZERO(ec->tracer);
}

static void test_exec(struct kunit *test)
{
	char *argv[2] = { "/bin/true", NULL };
	char *envp[2] = { "PATH=/bin", NULL };
	struct exec_check ec = {
		.test	= test,
		.cfg	= config(test, DS_BTS, 64,
				 DS_TRACE_USER | DS_TIMESTAMPS),
	};
	struct subprocess_info *info;
	const struct ds_bts_record *rec;
	size_t i, n, nexec = 0;
	int err;

	/* Running programs needs the initramfs and user mode helpers. */
	wait_for_initramfs();
	info = call_usermodehelper_setup(argv[0], argv, envp, GFP_KERNEL,
					 exec_init, NULL, &ec);
	KUNIT_ASSERT_NOT_NULL(test, info);
	err = call_usermodehelper_exec(info, UMH_WAIT_PROC);
	if (err == -EBUSY || err == -ENOENT)
		kunit_skip(test, "cannot run %s: %d", argv[0], err);
	KUNIT_ASSERT_EQ(test, err, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(ec.tracer));

	/* The program ran and exited: the tracer is detached. */
	KUNIT_EXPECT_EQ(test, ds_resume(ec.tracer), -ESRCH);

	/*
	 * The model traced no branches: the buffer holds the escape records
	 * of context switches, and exactly one of exec.
	 */
	n = index_of(test, ec.tracer);
	for (i = 0; i < n; i++) {
		rec = bts(test, ec.tracer, i);
		KUNIT_EXPECT_EQ_MSG(test, rec->from, DS_BTS_ESCAPE,
				    "record %zu", i);
		if (rec->to == DS_BTS_EXEC)
			nexec++;
	}
	KUNIT_EXPECT_EQ(test, nexec, 1);
	release(test, ec.tracer);
}

struct fork_check {
	struct completion done;
	bool tif;
	bool tracers;
};

static int fork_child(void *arg)
{
	struct fork_check *fc = arg;

	fc->tif = test_thread_flag(TIF_DS);
	fc->tracers = current->thread.ds_tracers[DS_BTS] ||
		      current->thread.ds_tracers[DS_PEBS];
	/*
	 * Had the child inherited the parent's tracers, its exit would
	 * detach them and drop a task reference it never took: forget them,
	 * so that a broken ds_fork() fails this case and nothing else.
	 */
	memset(current->thread.ds_tracers, 0, sizeof(current->thread.ds_tracers));
	clear_thread_flag(TIF_DS);
	complete(&fc->done);
	do_exit(0);
}

static void test_fork(struct kunit *test)
{
	struct ds_config cfg = config(test, DS_BTS, 8, DS_TRACE_USER);
	struct ds_config pebs = config(test, DS_PEBS, 8, DS_TRACE_USER);
	struct fork_check fc = { .tif = true, .tracers = true };
	struct ds_tracer *t;
	pid_t pid;

	t = request_ok(test, DS_BTS, current, -1, &cfg);
	request_ok(test, DS_PEBS, current, -1, &pebs);
	init_completion(&fc.done);

	pid = kernel_thread(fork_child, &fc, "x86_ds_fork",
			    CLONE_FS | CLONE_FILES | SIGCHLD);
	KUNIT_ASSERT_GT(test, pid, 0);
	wait_for_completion(&fc.done);

	/* The child has no tracer; the parent keeps its own. */
	KUNIT_EXPECT_FALSE(test, fc.tif);
	KUNIT_EXPECT_FALSE(test, fc.tracers);
	KUNIT_EXPECT_TRUE(test, test_thread_flag(TIF_DS));
	KUNIT_EXPECT_PTR_EQ(test, current->thread.ds_tracers[DS_BTS], t);
	KUNIT_EXPECT_EQ(test, ds_nr_users(DS_BTS), 1);
}

static void test_pebs(struct kunit *test)
{
	struct ds_config cfg = config(test, DS_PEBS, 8, DS_TRACE_KERNEL);
	struct model_cpu *m = &model[ctx_of(test)->cpu];
	struct ds_tracer *t;
	const u64 *rec;
	u64 value = 0;

	t = request_ok(test, DS_PEBS, NULL, ctx_of(test)->cpu, &cfg);
	KUNIT_EXPECT_EQ(test, ds_set_pebs_reset(t, 0, 1234), 0);
	KUNIT_EXPECT_EQ(test, ds_set_pebs_reset(t, DS_PEBS_NR_RESET - 1, 5),
			0);
	KUNIT_EXPECT_EQ(test, ds_set_pebs_reset(t, DS_PEBS_NR_RESET, 5),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, ds_get_pebs_reset(t, 0, &value), 0);
	KUNIT_EXPECT_EQ(test, value, 1234);
	ds_flush(t);
	KUNIT_EXPECT_EQ(test, m->ds->pebs_event_reset[0], 1234);
	KUNIT_EXPECT_EQ(test, m->ds->pebs_event_reset[DS_PEBS_NR_RESET - 1],
			5);

	KUNIT_EXPECT_EQ(test, ds_set_pebs_enable(t, BIT_ULL(0)), 0);
	/* PEBS cannot filter by mode: software does, by the ip. */
	model_emit(DS_PEBS, false, USER_IP(1), 11);
	model_emit(DS_PEBS, true, KERNEL_IP(2), 22);
	ds_flush(t);
	KUNIT_EXPECT_EQ(test, index_of(test, t), 1);
	KUNIT_ASSERT_EQ(test, ds_access(t, 0, (const void **)&rec), 0);
	KUNIT_EXPECT_EQ(test, rec[1], KERNEL_IP(2));
	KUNIT_EXPECT_EQ(test, rec[2], 22);
}

static u64 pebs_ip(struct kunit *test, struct ds_tracer *t, size_t i)
{
	const u64 *rec = NULL;

	KUNIT_EXPECT_EQ(test, ds_access(t, i, (const void **)&rec), 0);
	return rec ? rec[1] : 0;
}

/*
 * The hardware stores a PEBS record whenever a counter enabled for PEBS
 * overflows: the arbiter must hold the enables at 0 while it drains the
 * window (else a record stored between its read of the index and the
 * reset is lost) and while nothing is loaded (else records land in a
 * window nobody drains), and set them again when it loads.
 */
static void test_pebs_stopped_while_unloaded(struct kunit *test)
{
	struct ds_config cfg = config(test, DS_PEBS, 8, DS_TRACE_KERNEL);
	struct model_cpu *m = &model[ctx_of(test)->cpu];
	struct ds_fields *f = ds_area_fields(m->ds, DS_PEBS);
	const u64 enable = BIT_ULL(1) | BIT_ULL(33);
	struct ds_tracer *t;

	t = request_ok(test, DS_PEBS, NULL, ctx_of(test)->cpu, &cfg);
	KUNIT_EXPECT_EQ(test, m->pebs_enable, 0);
	KUNIT_ASSERT_EQ(test, ds_set_pebs_enable(t, enable), 0);
	KUNIT_EXPECT_EQ(test, m->pebs_enable, enable);
	model_emit(DS_PEBS, true, KERNEL_IP(1), 0);

	/* A record under way when the arbiter stops PEBS is kept. */
	m->pebs_inflight_ip = KERNEL_IP(2);
	KUNIT_ASSERT_EQ(test, ds_suspend(t), 0);
	KUNIT_EXPECT_EQ(test, m->pebs_enable, 0);
	KUNIT_EXPECT_EQ(test, m->pebs_inflight_ip, 0);
	KUNIT_EXPECT_EQ(test, index_of(test, t), 2);
	KUNIT_EXPECT_EQ(test, pebs_ip(test, t, 0), KERNEL_IP(1));
	KUNIT_EXPECT_EQ(test, pebs_ip(test, t, 1), KERNEL_IP(2));

	/* Suspended, nothing is loaded: the counters store nothing. */
	model_emit(DS_PEBS, true, KERNEL_IP(3), 0);
	KUNIT_EXPECT_EQ(test, f->index, f->base);

	/* Loaded again, the tracer's counters are enabled again. */
	KUNIT_ASSERT_EQ(test, ds_resume(t), 0);
	KUNIT_EXPECT_EQ(test, m->pebs_enable, enable);
	model_emit(DS_PEBS, true, KERNEL_IP(4), 0);
	m->pebs_inflight_ip = KERNEL_IP(5);
	KUNIT_ASSERT_EQ(test, ds_flush(t), 0);
	KUNIT_EXPECT_EQ(test, m->pebs_enable, enable);
	KUNIT_EXPECT_EQ(test, index_of(test, t), 4);
	KUNIT_EXPECT_EQ(test, pebs_ip(test, t, 2), KERNEL_IP(4));
	KUNIT_EXPECT_EQ(test, pebs_ip(test, t, 3), KERNEL_IP(5));

	/* Counters the hardware cannot enable for PEBS change nothing. */
	KUNIT_EXPECT_EQ(test, ds_set_pebs_enable(t, BIT_ULL(4)), -EINVAL);
	KUNIT_EXPECT_EQ(test, ds_set_pebs_enable(t, BIT_ULL(35)), -EINVAL);
	KUNIT_EXPECT_EQ(test, m->pebs_enable, enable);
}

/*
 * The enables are the tracer's, not the cpu's: a task tracer's counters
 * are on while its task runs, and never for another tracer once it is
 * suspended or released.
 */
static void test_pebs_enable_is_the_tracers(struct kunit *test)
{
	struct ds_config tcfg = config(test, DS_PEBS, 8, DS_TRACE_KERNEL);
	struct ds_config ccfg = config(test, DS_PEBS, 8, DS_TRACE_KERNEL);
	struct model_cpu *m = &model[ctx_of(test)->cpu];
	struct ds_tracer *tt, *ct;

	tt = request_ok(test, DS_PEBS, current, -1, &tcfg);
	ct = request_ok(test, DS_PEBS, NULL, ctx_of(test)->cpu, &ccfg);
	KUNIT_ASSERT_EQ(test, ds_set_pebs_enable(tt, BIT_ULL(0)), 0);
	KUNIT_ASSERT_EQ(test, ds_set_pebs_enable(ct, BIT_ULL(2)), 0);
	KUNIT_EXPECT_EQ(test, m->pebs_enable, BIT_ULL(0) | BIT_ULL(2));

	KUNIT_ASSERT_EQ(test, ds_suspend(tt), 0);
	KUNIT_EXPECT_EQ(test, m->pebs_enable, BIT_ULL(2));
	KUNIT_ASSERT_EQ(test, ds_resume(tt), 0);
	KUNIT_EXPECT_EQ(test, m->pebs_enable, BIT_ULL(0) | BIT_ULL(2));

	release(test, tt);
	KUNIT_EXPECT_EQ(test, m->pebs_enable, BIT_ULL(2));
	KUNIT_ASSERT_EQ(test, ds_set_pebs_enable(ct, 0), 0);
	KUNIT_EXPECT_EQ(test, m->pebs_enable, 0);
}

/*
 * The hardware raises one interrupt per overflow.  A window the NMI
 * handler leaves to the irq_work stays above its threshold until the
 * irq_work runs; an NMI of another source in between is not the
 * arbiter's, and claiming it would hide it from its owner.
 */
static void test_nmi_claims_one_overflow(struct kunit *test)
{
	struct ds_config cfg = config(test, DS_PEBS, 16, DS_TRACE_KERNEL);
	struct model_cpu *m = &model[ctx_of(test)->cpu];
	struct ds_fields *f = ds_area_fields(m->ds, DS_PEBS);
	unsigned long irqflags;
	struct ds_tracer *t;
	int first, second;
	size_t stored;

	t = request_ok(test, DS_PEBS, NULL, ctx_of(test)->cpu, &cfg);
	KUNIT_ASSERT_EQ(test, ds_set_pebs_enable(t, BIT_ULL(0)), 0);

	/* The irq_work cannot run before interrupts are enabled again. */
	local_irq_save(irqflags);
	for (stored = 0; f->index < f->threshold; stored++)
		model_store_pebs(m, KERNEL_IP(1), 0);
	first = ds_nmi_handler(NMI_LOCAL, NULL);
	/* The hardware goes on storing into the slack until the drain. */
	model_store_pebs(m, KERNEL_IP(3), 0);
	second = ds_nmi_handler(NMI_LOCAL, NULL);
	local_irq_restore(irqflags);

	KUNIT_EXPECT_EQ(test, first, NMI_HANDLED);
	KUNIT_EXPECT_EQ(test, second, NMI_DONE);
	KUNIT_ASSERT_EQ(test, ds_flush(t), 0);
	KUNIT_EXPECT_EQ(test, f->index, f->base);
	KUNIT_EXPECT_EQ(test, model_acks, 1);
	KUNIT_EXPECT_EQ(test, m->dropped[DS_PEBS], 0);
	KUNIT_EXPECT_EQ(test, index_of(test, t), stored + 1);
	KUNIT_EXPECT_EQ(test, pebs_ip(test, t, stored), KERNEL_IP(3));

	/* Served: the next overflow is the arbiter's again. */
	local_irq_save(irqflags);
	while (f->index < f->threshold)
		model_store_pebs(m, KERNEL_IP(2), 0);
	first = ds_nmi_handler(NMI_LOCAL, NULL);
	local_irq_restore(irqflags);
	KUNIT_EXPECT_EQ(test, first, NMI_HANDLED);
	KUNIT_ASSERT_EQ(test, ds_flush(t), 0);
}

/*
 * CPU hotplug.
 */

struct hotplug_check {
	struct completion started;
	int victim;
};

/*
 * A traced task that stays on the victim cpu through its teardown: with
 * migration disabled the scheduler lets it run there until
 * CPUHP_AP_SCHED_WAIT_EMPTY, below the arbiter's CPUHP_AP_ONLINE_DYN
 * callback, and each of its sleeps switches it out and in.
 */
static int hotplug_thread(void *arg)
{
	struct hotplug_check *hc = arg;
	int i;

	migrate_disable();
	/* Free to go anywhere once migration is enabled again. */
	set_cpus_allowed_ptr(current, cpu_possible_mask);
	complete(&hc->started);
	while (cpu_active(hc->victim) && !kthread_should_stop())
		schedule_timeout_uninterruptible(1);
	/* The victim's hotplug thread runs the teardown callbacks now. */
	for (i = 0; i < 200 && !kthread_should_stop(); i++)
		schedule_timeout_uninterruptible(1);
	migrate_enable();
	while (!kthread_should_stop())
		schedule_timeout_uninterruptible(1);
	return 0;
}

/* Put a record into the window of @cpu as the hardware would. */
static void model_store_offline(int cpu, u64 ip)
{
	struct ds_fields *f = ds_area_fields(model[cpu].ds, DS_BTS);
	struct ds_bts_record *rec;

	if (f->index < f->base ||
	    f->index + DS_BTS_RECORD_SIZE > f->max)
		return;
	rec = (struct ds_bts_record *)(unsigned long)f->index;
	rec->from = ip;
	rec->to = ip + 0x1000;
	f->index += DS_BTS_RECORD_SIZE;
}

/*
 * A cpu tracer and a traced task on a cpu that goes offline and online:
 * nothing may stay loaded across the cpu's death, nor be drained into a
 * tracer released while the cpu was offline.
 */
static void test_cpu_hotplug(struct kunit *test)
{
	struct ds_config tcfg = config(test, DS_BTS, 16, DS_TRACE_USER);
	struct x86_ds_ctx *ctx = ctx_of(test);
	struct hotplug_check hc;
	struct ds_tracer *ct, *tt;
	struct ds_config ccfg;
	struct task_struct *k;
	int victim, round;
	u64 *released;

	victim = cpumask_next(0, cpu_online_mask);
	if (victim >= nr_cpu_ids || !cpu_is_hotpluggable(victim))
		kunit_skip(test, "no second cpu that can go offline");
	/* Watch from cpu 0, which stays. */
	if (ctx->cpu == victim) {
		ctx->cpu = 0;
		set_cpus_allowed_ptr(current, cpumask_of(0));
	}

	for (round = 0; round < 3; round++) {
		ccfg = config(test, DS_BTS, 16,
			      DS_TRACE_USER | DS_TRACE_KERNEL);
		ct = request_ok(test, DS_BTS, NULL, victim, &ccfg);
		KUNIT_ASSERT_NE(test, model[victim].ctl[DS_BTS], 0);

		init_completion(&hc.started);
		hc.victim = victim;
		k = kthread_create(hotplug_thread, &hc, "x86_ds_hotplug");
		KUNIT_ASSERT_FALSE(test, IS_ERR(k));
		get_task_struct(k);
		set_cpus_allowed_ptr(k, cpumask_of(victim));
		tt = request_ok(test, DS_BTS, k, -1, &tcfg);
		wake_up_process(k);
		wait_for_completion(&hc.started);

		KUNIT_ASSERT_EQ(test, remove_cpu(victim), 0);
		/* Dead with BTS on: the next owner of the cpu inherits it. */
		KUNIT_EXPECT_EQ_MSG(test, model[victim].ctl[DS_BTS], 0,
				    "round %d", round);

		/*
		 * Released while the cpu is offline; a record the hardware
		 * left in the window must not reach it on the way up.
		 */
		released = ccfg.base;
		release(test, ct);
		model_store_offline(victim, KERNEL_IP(round));
		/* Requested while offline: loaded when the cpu comes up. */
		ccfg = config(test, DS_BTS, 16, DS_TRACE_KERNEL);
		ct = request_ok(test, DS_BTS, NULL, victim, &ccfg);
		KUNIT_EXPECT_EQ(test, model[victim].ctl[DS_BTS], 0);

		/* Gone, so that only the cpu tracer loads on the way up. */
		kthread_stop_put(k);
		KUNIT_ASSERT_EQ(test, add_cpu(victim), 0);
		KUNIT_EXPECT_EQ_MSG(test, released[0], 0,
				    "round %d: drained into a released tracer",
				    round);
		/* Nor into the new one, which may reuse its memory. */
		KUNIT_EXPECT_EQ_MSG(test, ((u64 *)ccfg.base)[0], 0,
				    "round %d: a stale record drained", round);
		KUNIT_EXPECT_EQ(test, model[victim].ctl[DS_BTS],
				DS_CTL_ON | DS_CTL_INT | DS_CTL_KERNEL);

		release(test, tt);
		release(test, ct);
		KUNIT_EXPECT_EQ(test, model[victim].ctl[DS_BTS], 0);
	}
}

static struct kunit_case x86_ds_test_cases[] = {
	KUNIT_CASE(test_real_hardware_absent),
	KUNIT_CASE(test_real_hardware_kernel),
	KUNIT_CASE(test_real_hardware_perf),
	KUNIT_CASE(test_real_hardware_exclusive),
	KUNIT_CASE(test_no_hardware),
	KUNIT_CASE(test_request_release),
	KUNIT_CASE(test_invalid),
	KUNIT_CASE(test_busy),
	KUNIT_CASE(test_perf_holds_half),
	KUNIT_CASE(test_replace),
	KUNIT_CASE(test_task_and_cpu),
	KUNIT_CASE(test_filter),
	KUNIT_CASE(test_wrap),
	KUNIT_CASE(test_overflow_callback),
	KUNIT_CASE(test_overflow_reset_before_callback),
	KUNIT_CASE(test_window_interrupt),
	KUNIT_CASE(test_early_window_interrupt),
	KUNIT_CASE(test_write_reset_clear),
	KUNIT_CASE(test_clear_used),
	KUNIT_CASE(test_clear_big),
	KUNIT_CASE(test_suspend_resume),
	KUNIT_CASE(test_timestamps),
	KUNIT_CASE(test_timestamps_only),
	KUNIT_CASE(test_exit),
	KUNIT_CASE(test_request_exiting),
	KUNIT_CASE(test_exec),
	KUNIT_CASE(test_fork),
	KUNIT_CASE(test_pebs),
	KUNIT_CASE(test_pebs_stopped_while_unloaded),
	KUNIT_CASE(test_pebs_enable_is_the_tracers),
	KUNIT_CASE(test_nmi_claims_one_overflow),
	KUNIT_CASE_SLOW(test_cpu_hotplug),
	{}
};

static struct kunit_suite x86_ds_test_suite = {
	.name		= "x86_ds",
	.init		= x86_ds_test_init,
	.exit		= x86_ds_test_exit,
	.test_cases	= x86_ds_test_cases,
};

kunit_test_suites(&x86_ds_test_suite);
