// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite bts_model: does this CPU's Branch Trace Store behave as the
 * Intel SDM (Vol. 3, "Debug Store", "Branch Trace Store", IA32_DEBUGCTL,
 * the local APIC's LVT, "Processor Management and Initialization") says?
 *
 * Test infrastructure of the QEMU BTS model (tools/testing/qemu-bts), not
 * part of the kernel series: the harness builds it into the test kernels
 * (scripts/prepare-tree.sh), where it runs at boot.  Every case must pass
 * on a real BTS CPU as on the model, and skips on a CPU without BTS.
 *
 * perf and the DS arbiter own IA32_DS_AREA and the BTS bits of
 * IA32_DEBUGCTL on each cpu.  A case borrows them with interrupts off on
 * one cpu: it saves both MSRs, points DS_AREA at a DS area of its own,
 * traces its own branches and puts both MSRs back before it lets
 * interrupts in again.  The PMI comes as an NMI, which interrupts off do
 * not hold back; a first NMI handler of ours sees it before perf's can
 * touch the LVT entry.
 */

#include <kunit/test.h>
#include <linux/cpu.h>
#include <linux/cpufeature.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/hw_breakpoint.h>
#include <linux/module.h>
#include <linux/nmi.h>
#include <linux/perf_event.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <asm/apic.h>
#include <asm/msr.h>
#include <asm/perf_event.h>

/* A BTS record of the 64-bit DS format: from, to, flags. */
struct bts_model_record {
	u64 from;
	u64 to;
	u64 flags;
};

#define BTS_MODEL_RECORDS	64
/* The interrupt threshold of the PMI cases, in records from the base. */
#define BTS_MODEL_THRESHOLD	8

/* The 64-bit DS buffer management area: the BTS fields, PEBS's unused. */
struct bts_model_area {
	u64 bts_base;
	u64 bts_index;
	u64 bts_max;
	u64 bts_threshold;
	u64 pebs[8];
};

/* A DS area and its BTS buffer, in one kmalloc()ed block. */
struct bts_model_ds {
	struct bts_model_area area;
	struct bts_model_record rec[BTS_MODEL_RECORDS];
};

#define BTS_MODEL_DEBUGCTL_BITS						\
	(DEBUGCTLMSR_TR | DEBUGCTLMSR_BTS | DEBUGCTLMSR_BTINT |	\
	 DEBUGCTLMSR_BTS_OFF_OS | DEBUGCTLMSR_BTS_OFF_USR)

/*
 * IA32_PERF_GLOBAL_STATUS bits of counter overflows: general-purpose
 * counters from bit 0, fixed ones from bit 32, perf metrics at 48.
 */
#define BTS_MODEL_COUNTER_OVF	GENMASK_ULL(48, 0)

/* What a case took from perf and the arbiter on its cpu. */
struct bts_model_saved {
	u64 debugctl;
	u64 ds_area;
	u32 lvtpc;
};

/*
 * The PMI of the current case, written where it happens:
 *
 *   IDLE ---case arms on its cpu---> ARMED ---NMI on that cpu---> SEEN
 *
 * and back to IDLE by the case, with interrupts off on that cpu all the
 * while, so that only its NMI handler races with it.
 */
enum {
	BTS_MODEL_IDLE,
	BTS_MODEL_ARMED,
	BTS_MODEL_SEEN,
};

struct bts_model_pmi {
	int state;
	int cpu;
	struct bts_model_ds *ds;
	/* Read by the NMI handler, valid in state SEEN. */
	u32 lvtpc;
	u64 index;
};

static struct bts_model_pmi bts_model_pmi;

/* Hits of the watchpoint of test_ds_store_no_watchpoint(). */
static atomic_t bts_model_hits;

static u32 bts_model_lvtpc_read(void)
{
	u64 val;

	if (x2apic_enabled()) {
		rdmsrl(APIC_BASE_MSR + (APIC_LVTPC >> 4), val);
		return val;
	}
	return native_apic_mem_read(APIC_LVTPC);
}

static void bts_model_lvtpc_write(u32 val)
{
	if (x2apic_enabled())
		wrmsrl(APIC_BASE_MSR + (APIC_LVTPC >> 4), val);
	else
		native_apic_mem_write(APIC_LVTPC, val);
}

/* Set the BTS bits of DEBUGCTL to @bits, keeping the others. */
static void bts_model_debugctl(u64 bits)
{
	u64 debugctl;

	rdmsrl(MSR_IA32_DEBUGCTLMSR, debugctl);
	debugctl &= ~BTS_MODEL_DEBUGCTL_BITS;
	wrmsrl(MSR_IA32_DEBUGCTLMSR, debugctl | bits);
}

/*
 * An empty DS area: @threshold records from the base, or 0 for a
 * threshold above the absolute maximum (no interrupt, SDM 17.4.9.3).
 */
static void bts_model_ds_init(struct bts_model_ds *ds, unsigned int threshold)
{
	u64 base = (unsigned long)ds->rec;

	memset(ds, 0, sizeof(*ds));
	ds->area.bts_base = base;
	ds->area.bts_index = base;
	ds->area.bts_max = base + sizeof(ds->rec);
	if (threshold)
		ds->area.bts_threshold = base + threshold * sizeof(ds->rec[0]);
	else
		ds->area.bts_threshold = ds->area.bts_max + sizeof(ds->rec[0]);
}

/* Take DS_AREA and DEBUGCTL's BTS bits of this cpu for @ds. */
static void bts_model_claim(struct bts_model_saved *s, struct bts_model_ds *ds)
{
	lockdep_assert_irqs_disabled();

	rdmsrl(MSR_IA32_DEBUGCTLMSR, s->debugctl);
	rdmsrl(MSR_IA32_DS_AREA, s->ds_area);
	/* Stop whoever traced here before the area changes under them. */
	bts_model_debugctl(0);
	wrmsrl(MSR_IA32_DS_AREA, (unsigned long)&ds->area);
}

static void bts_model_release(const struct bts_model_saved *s)
{
	lockdep_assert_irqs_disabled();

	bts_model_debugctl(0);
	wrmsrl(MSR_IA32_DS_AREA, s->ds_area);
	wrmsrl(MSR_IA32_DEBUGCTLMSR, s->debugctl);
}

/* @n taken branches (n > 0), of this function's own loop. */
static noinline void bts_model_branches(unsigned long n)
{
	asm volatile("1:\n\t"
		     "dec %0\n\t"
		     "jnz 1b"
		     : "+r" (n) : : "cc");
}

/* Records in @ds, from the base to the index. */
static unsigned long bts_model_stored(const struct bts_model_ds *ds)
{
	return (ds->area.bts_index - ds->area.bts_base) / sizeof(ds->rec[0]);
}

static int bts_model_nmi(unsigned int cmd, struct pt_regs *regs)
{
	struct bts_model_pmi *p = &bts_model_pmi;
	u64 status;
	u32 lvtpc;

	if (READ_ONCE(p->state) != BTS_MODEL_ARMED ||
	    READ_ONCE(p->cpu) != smp_processor_id())
		return NMI_DONE;
	/*
	 * A counter's overflow is perf's PMI, not ours to swallow.  Any
	 * other NMI while armed is claimed and judged by the case: one that
	 * should not have come fails it, wherever the index then stands.
	 */
	if (!rdmsrl_safe(MSR_CORE_PERF_GLOBAL_STATUS, &status) &&
	    (status & BTS_MODEL_COUNTER_OVF))
		return NMI_DONE;

	/* First, before any other handler can rewrite the entry. */
	lvtpc = bts_model_lvtpc_read();
	/* No more records, so no second PMI, whatever the LVT does. */
	bts_model_debugctl(0);
	/* The DS buffer overflow bit, where the CPU reports it. */
	if (!rdmsrl_safe(MSR_CORE_PERF_GLOBAL_STATUS, &status) &&
	    (status & GLOBAL_STATUS_BUFFER_OVF))
		wrmsrl_safe(MSR_CORE_PERF_GLOBAL_OVF_CTRL,
			    GLOBAL_STATUS_BUFFER_OVF);

	p->lvtpc = lvtpc;
	p->index = READ_ONCE(p->ds->area.bts_index);
	WRITE_ONCE(p->state, BTS_MODEL_SEEN);
	return NMI_HANDLED;
}

/* What one run of bts_model_run_pmi() saw. */
struct bts_model_pmi_run {
	bool seen;
	u32 lvtpc;
	u64 index;
	unsigned long stored;
};

/*
 * Trace 2 * BTS_MODEL_RECORDS branches into @ds with @threshold (see
 * bts_model_ds_init()) and DEBUGCTL.BTINT as @btint, then wait up to
 * 10 ms for the PMI.  LVTPC is set to deliver an unmasked NMI for the
 * run and put back after it.
 */
static void bts_model_run_pmi(struct bts_model_ds *ds, unsigned int threshold,
			      bool btint, struct bts_model_pmi_run *r)
{
	struct bts_model_pmi *p = &bts_model_pmi;
	struct bts_model_saved s;
	unsigned long flags;
	int i;

	bts_model_ds_init(ds, threshold);
	local_irq_save(flags);
	bts_model_claim(&s, ds);
	s.lvtpc = bts_model_lvtpc_read();
	bts_model_lvtpc_write(APIC_DM_NMI);

	p->ds = ds;
	p->cpu = smp_processor_id();
	/* The NMI handler runs on this cpu: program order is enough. */
	barrier();
	WRITE_ONCE(p->state, BTS_MODEL_ARMED);
	barrier();

	bts_model_debugctl(DEBUGCTLMSR_TR | DEBUGCTLMSR_BTS |
			   (btint ? DEBUGCTLMSR_BTINT : 0));
	bts_model_branches(2 * BTS_MODEL_RECORDS);
	for (i = 0; i < 2000; i++) {
		if (READ_ONCE(p->state) == BTS_MODEL_SEEN)
			break;
		udelay(5);
	}
	bts_model_debugctl(0);

	r->seen = READ_ONCE(p->state) == BTS_MODEL_SEEN;
	WRITE_ONCE(p->state, BTS_MODEL_IDLE);
	barrier();
	r->lvtpc = p->lvtpc;
	r->index = p->index;
	r->stored = bts_model_stored(ds);

	bts_model_lvtpc_write(s.lvtpc);
	bts_model_release(&s);
	local_irq_restore(flags);
}

/*
 * SDM 17.4.9.3: "In order to prevent generating an interrupt, when
 * working with circular BTS buffer, SW need to set BTS interrupt threshold
 * to a value greater than BTS absolute maximum [...]. It's not enough to
 * clear the BTINT flag itself only."  BTINT selects what happens at the
 * absolute maximum (wrap or stop), not whether the threshold interrupts.
 */
static void test_pmi_without_btint(struct kunit *test)
{
	struct bts_model_ds *ds = test->priv;
	struct bts_model_pmi_run r;

	bts_model_run_pmi(ds, BTS_MODEL_THRESHOLD, false, &r);

	KUNIT_ASSERT_NE_MSG(test, ds->rec[0].from, 0ULL,
			    "no BTS record stored at all");
	KUNIT_EXPECT_TRUE_MSG(test, r.seen,
			      "no PMI: the BTS index passed the interrupt threshold (record %d of %d) with DEBUGCTL.BTINT clear; SDM 17.4.9.3: clearing BTINT does not prevent the interrupt",
			      BTS_MODEL_THRESHOLD, BTS_MODEL_RECORDS);
}

/* The other side of it: a threshold above the maximum never interrupts. */
static void test_no_pmi_threshold_above_max(struct kunit *test)
{
	struct bts_model_ds *ds = test->priv;
	struct bts_model_pmi_run r;

	bts_model_run_pmi(ds, 0, false, &r);

	KUNIT_ASSERT_NE_MSG(test, ds->rec[0].from, 0ULL,
			    "no BTS record stored at all");
	KUNIT_EXPECT_FALSE_MSG(test, r.seen,
			       "a PMI although the interrupt threshold is above the absolute maximum (circular buffer, BTINT clear)");
}

/*
 * SDM, "Local Vector Table", Mask: "When the local APIC handles a
 * performance-monitoring counters interrupt, it automatically sets the
 * mask flag in the LVT performance counter register."  Linux's handlers
 * unmask it again (apic_write(APIC_LVTPC, APIC_DM_NMI)).
 */
static void test_lvtpc_masked_by_pmi(struct kunit *test)
{
	struct bts_model_ds *ds = test->priv;
	struct bts_model_pmi_run r;

	bts_model_run_pmi(ds, BTS_MODEL_THRESHOLD, true, &r);

	KUNIT_ASSERT_TRUE_MSG(test, r.seen,
			      "no PMI at the interrupt threshold with DEBUGCTL.BTINT set (%lu records stored)",
			      r.stored);
	KUNIT_EXPECT_TRUE_MSG(test, r.lvtpc & APIC_LVT_MASKED,
			      "LVTPC is %#x in the PMI's NMI handler: the local APIC did not set the mask bit (16) when it delivered the interrupt",
			      r.lvtpc);
	KUNIT_EXPECT_LE_MSG(test, r.stored, (unsigned long)BTS_MODEL_RECORDS,
			    "records beyond the absolute maximum with BTINT set");
}

static void bts_model_bp_hit(struct perf_event *bp,
			     struct perf_sample_data *data,
			     struct pt_regs *regs)
{
	atomic_inc(&bts_model_hits);
}

/*
 * A data breakpoint triggers on the accesses of instructions; the
 * processor's own stores of BTS records into the DS buffer are not such
 * accesses and must not raise #DB.  (Were they, the #DB would itself be
 * a branch to record.)  The watched word is a record's "from" field, not
 * the DS index, so that a model which gets this wrong stores the next
 * record elsewhere instead of looping on the index.
 */
static void test_ds_store_no_watchpoint(struct kunit *test)
{
	struct bts_model_ds *ds = test->priv;
	struct perf_event * __percpu *bp;
	struct perf_event_attr attr;
	struct bts_model_saved s;
	unsigned long flags;
	int hits, stored;

	bts_model_ds_init(ds, 0);
	hw_breakpoint_init(&attr);
	attr.bp_addr = (unsigned long)&ds->rec[2].from;
	attr.bp_len = HW_BREAKPOINT_LEN_8;
	attr.bp_type = HW_BREAKPOINT_W;
	atomic_set(&bts_model_hits, 0);
	bp = register_wide_hw_breakpoint(&attr, bts_model_bp_hit, NULL);
	if (IS_ERR((void __force *)bp))
		kunit_skip(test, "no watchpoint for the BTS buffer: %ld",
			   PTR_ERR((void __force *)bp));

	local_irq_save(flags);
	bts_model_claim(&s, ds);
	bts_model_debugctl(DEBUGCTLMSR_TR | DEBUGCTLMSR_BTS);
	bts_model_branches(BTS_MODEL_RECORDS / 4);
	bts_model_debugctl(0);
	bts_model_release(&s);
	local_irq_restore(flags);

	hits = atomic_read(&bts_model_hits);
	stored = bts_model_stored(ds);
	/* The control: an instruction's store to the word does trigger. */
	WRITE_ONCE(ds->rec[2].from, 0);
	unregister_wide_hw_breakpoint(bp);

	KUNIT_ASSERT_GT_MSG(test, stored, 2,
			    "only %d BTS records stored, record 2 was never written",
			    stored);
	KUNIT_EXPECT_EQ_MSG(test, hits, 0,
			    "%d #DB from a write watchpoint on BTS record 2 while the processor stored %d records: DS stores must not trigger data breakpoints",
			    hits, stored);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&bts_model_hits), hits + 1,
			    "the watchpoint did not trigger on a MOV to the word: this case proves nothing");
}

/*
 * WRMSR: #GP(0) "if the source register contains a non-canonical address
 * and ECX specifies one of the following MSRs: IA32_DS_AREA, ...".  Both
 * values are non-canonical for 48- and 57-bit linear addresses.
 */
static void test_ds_area_noncanonical_gp(struct kunit *test)
{
	static const u64 bad[] = { 0x8000000000000000ULL, 0x7fff000000000000ULL };
	u64 debugctl, ds_area, now[ARRAY_SIZE(bad)];
	int err[ARRAY_SIZE(bad)], good, i;
	unsigned long flags;

	local_irq_save(flags);
	rdmsrl(MSR_IA32_DEBUGCTLMSR, debugctl);
	rdmsrl(MSR_IA32_DS_AREA, ds_area);
	bts_model_debugctl(0);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		err[i] = wrmsrl_safe(MSR_IA32_DS_AREA, bad[i]);
		rdmsrl(MSR_IA32_DS_AREA, now[i]);
		/* Put back at once what a faulty CPU took. */
		wrmsrl(MSR_IA32_DS_AREA, ds_area);
	}
	good = wrmsrl_safe(MSR_IA32_DS_AREA, ds_area);
	wrmsrl(MSR_IA32_DEBUGCTLMSR, debugctl);
	local_irq_restore(flags);

	KUNIT_ASSERT_EQ_MSG(test, good, 0,
			    "WRMSR of the canonical IA32_DS_AREA %#llx faulted",
			    ds_area);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_NE_MSG(test, err[i], 0,
				    "WRMSR IA32_DS_AREA <- %#llx (non-canonical) did not raise #GP; DS_AREA read back %#llx",
				    bad[i], now[i]);
}

/* DEBUGCTL and DS_AREA of one cpu, set or read on that cpu. */
struct bts_model_msrs {
	u64 debugctl;
	u64 ds_area;
};

static void bts_model_msrs_swap(void *arg)
{
	struct bts_model_msrs *m = arg, old;

	rdmsrl(MSR_IA32_DEBUGCTLMSR, old.debugctl);
	rdmsrl(MSR_IA32_DS_AREA, old.ds_area);
	wrmsrl(MSR_IA32_DEBUGCTLMSR, m->debugctl);
	wrmsrl(MSR_IA32_DS_AREA, m->ds_area);
	*m = old;
}

static void bts_model_msrs_read(void *arg)
{
	struct bts_model_msrs *m = arg;

	rdmsrl(MSR_IA32_DEBUGCTLMSR, m->debugctl);
	rdmsrl(MSR_IA32_DS_AREA, m->ds_area);
}

/* The first online cpu other than the boot cpu, or -1. */
static int bts_model_ap(void)
{
	int cpu;

	for_each_online_cpu(cpu) {
		if (cpu)
			return cpu;
	}
	return -1;
}

/*
 * INIT of an AP (offline, then online through INIT-SIPI-SIPI) leaves its
 * MSRs alone: "All Other MSRs: INIT Unchanged" in the SDM's table of
 * processor states following power-up, reset or INIT; only RESET and
 * power-up clear DEBUGCTL (KVM's INIT emulation keeps it too).  With
 * DEBUGCTL's BTS bits, software, not INIT, stops BTS on a dying cpu.
 * The bits set here (BTS_OFF_OS and BTS_OFF_USR, without TR and BTS)
 * store nothing, so the AP's trip through real mode writes no record.
 */
static void test_ap_init_keeps_msrs(struct kunit *test)
{
	struct bts_model_msrs want, saved, got;
	struct bts_model_ds *ds = test->priv;
	int cpu = bts_model_ap();
	int err;

	if (cpu < 0)
		kunit_skip(test, "no AP online to take through INIT");

	bts_model_ds_init(ds, 0);
	want.debugctl = DEBUGCTLMSR_BTS_OFF_OS | DEBUGCTLMSR_BTS_OFF_USR;
	want.ds_area = (unsigned long)&ds->area;
	saved = want;
	err = smp_call_function_single(cpu, bts_model_msrs_swap, &saved, 1);
	KUNIT_ASSERT_EQ(test, err, 0);

	err = remove_cpu(cpu);
	if (err) {
		smp_call_function_single(cpu, bts_model_msrs_swap, &saved, 1);
		kunit_skip(test, "cpu %d cannot go offline: %d", cpu, err);
	}
	err = add_cpu(cpu);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "cpu %d did not come back online",
			    cpu);

	err = smp_call_function_single(cpu, bts_model_msrs_read, &got, 1);
	got.debugctl &= BTS_MODEL_DEBUGCTL_BITS;
	smp_call_function_single(cpu, bts_model_msrs_swap, &saved, 1);
	KUNIT_ASSERT_EQ(test, err, 0);

	KUNIT_EXPECT_EQ_MSG(test, got.debugctl, want.debugctl,
			    "cpu %d: DEBUGCTL's BTS bits %#llx after INIT, %#llx before: INIT must leave MSRs unchanged",
			    cpu, got.debugctl, want.debugctl);
	KUNIT_EXPECT_EQ_MSG(test, got.ds_area, want.ds_area,
			    "cpu %d: IA32_DS_AREA %#llx after INIT, %#llx before: INIT must leave MSRs unchanged",
			    cpu, got.ds_area, want.ds_area);
	KUNIT_EXPECT_EQ_MSG(test, ds->area.bts_index, ds->area.bts_base,
			    "cpu %d stored %lu BTS records with TR and BTS clear",
			    cpu, bts_model_stored(ds));
}

static int bts_model_test_init(struct kunit *test)
{
	struct bts_model_ds *ds;

	if (!boot_cpu_has(X86_FEATURE_DS) || !boot_cpu_has(X86_FEATURE_BTS))
		kunit_skip(test, "the CPU has no BTS (X86_FEATURE_DS, X86_FEATURE_BTS)");
	if (!boot_cpu_has(X86_FEATURE_DTES64))
		kunit_skip(test, "no 64-bit DS format (X86_FEATURE_DTES64)");
	if (!boot_cpu_has(X86_FEATURE_APIC))
		kunit_skip(test, "no local APIC for the PMI");
	/*
	 * Borrowing DS_AREA and DEBUGCTL is safe only before anyone traces:
	 * at boot.  Run again through debugfs, the suite would take them
	 * from under perf's or the arbiter's NMI handlers.
	 */
	if (system_state == SYSTEM_RUNNING)
		kunit_skip(test, "runs at boot only: perf may own the Debug Store now");

	ds = kunit_kzalloc(test, sizeof(*ds), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ds);
	test->priv = ds;
	return 0;
}

static int bts_model_suite_init(struct kunit_suite *suite)
{
	return register_nmi_handler(NMI_LOCAL, bts_model_nmi, NMI_FLAG_FIRST,
				    "bts_model");
}

static void bts_model_suite_exit(struct kunit_suite *suite)
{
	unregister_nmi_handler(NMI_LOCAL, "bts_model");
}

static struct kunit_case bts_model_cases[] = {
	KUNIT_CASE(test_pmi_without_btint),
	KUNIT_CASE(test_no_pmi_threshold_above_max),
	KUNIT_CASE(test_lvtpc_masked_by_pmi),
	KUNIT_CASE(test_ds_store_no_watchpoint),
	KUNIT_CASE(test_ds_area_noncanonical_gp),
	KUNIT_CASE(test_ap_init_keeps_msrs),
	{}
};

static struct kunit_suite bts_model_suite = {
	.name = "bts_model",
	.suite_init = bts_model_suite_init,
	.suite_exit = bts_model_suite_exit,
	.init = bts_model_test_init,
	.test_cases = bts_model_cases,
};

kunit_test_suite(bts_model_suite);

MODULE_DESCRIPTION("Conformance of Branch Trace Store to the Intel SDM");
MODULE_LICENSE("GPL");
