// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit test for the slot accounting of flexible breakpoints.
 *
 * Flexible breakpoints (attr.bp_flexible, not pinned) of a task or of a CPU
 * share one register at least and take turns on it; every other breakpoint
 * keeps a register, see the rules above __reserve_bp_slot().  Most cases
 * only create and release events on tasks that never run, so they check
 * what is accepted, not how perf rotates; the debugger's cases schedule the
 * test's own flexible breakpoints in, as a debugger finds them.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/err.h>
#include <linux/hw_breakpoint.h>
#include <linux/kthread.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <asm/hw_breakpoint.h>

#define FLEX_MAX_BPS	64

static char flex_vars[FLEX_MAX_BPS];
static struct perf_event *flex_bps[FLEX_MAX_BPS];
static struct task_struct *flex_tasks[2];
/* A breakpoint made and reserved the way kgdb does. */
static struct perf_event *flex_debugger;
static int flex_nr_bps;

static int flex_slots(void)
{
	return hw_breakpoint_slots(TYPE_DATA);
}

/* How a breakpoint is created. */
enum flex_kind {
	FLEX_FLEXIBLE,		/* bp_flexible, not pinned */
	FLEX_PINNED,
	FLEX_PLAIN,		/* neither: what every user got before bp_flexible */
};

static struct perf_event *flex_create(int cpu, struct task_struct *tsk,
				      enum flex_kind kind)
{
	struct perf_event_attr attr;
	int idx = flex_nr_bps;

	hw_breakpoint_init(&attr);
	attr.pinned = kind == FLEX_PINNED;
	attr.bp_flexible = kind == FLEX_FLEXIBLE;
	attr.bp_addr = (unsigned long)&flex_vars[idx % FLEX_MAX_BPS];
	attr.bp_len = HW_BREAKPOINT_LEN_1;
	attr.bp_type = HW_BREAKPOINT_W;
	return perf_event_create_kernel_counter(&attr, cpu, tsk, NULL, NULL);
}

static const char *flex_kind_name(enum flex_kind kind)
{
	return kind == FLEX_PLAIN ? "plain" : kind == FLEX_PINNED ? "pinned" : "flexible";
}

/* Create a breakpoint that must be accepted, and keep it for test_exit(). */
static int flex_add(struct kunit *test, int cpu, struct task_struct *tsk, enum flex_kind kind)
{
	struct perf_event *bp;

	KUNIT_ASSERT_LT(test, flex_nr_bps, FLEX_MAX_BPS);
	bp = flex_create(cpu, tsk, kind);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(bp), "%s breakpoint %d refused: %ld",
			       flex_kind_name(kind), flex_nr_bps,
			       PTR_ERR(bp));
	flex_bps[flex_nr_bps] = bp;
	return flex_nr_bps++;
}

static void flex_add_many(struct kunit *test, int nr, int cpu,
			  struct task_struct *tsk, enum flex_kind kind)
{
	for (int i = 0; i < nr; i++)
		flex_add(test, cpu, tsk, kind);
}

/* Check that a breakpoint is refused with -ENOSPC. */
static void flex_expect_nospc(struct kunit *test, int cpu,
			      struct task_struct *tsk, enum flex_kind kind)
{
	struct perf_event *bp = flex_create(cpu, tsk, kind);

	if (!IS_ERR(bp))
		unregister_hw_breakpoint(bp);
	KUNIT_EXPECT_EQ_MSG(test, PTR_ERR_OR_ZERO(bp), -ENOSPC,
			    "%s breakpoint on cpu %d task %s accepted",
			    flex_kind_name(kind), cpu,
			    tsk ? tsk->comm : "(none)");
}

static void flex_release(int idx)
{
	unregister_hw_breakpoint(flex_bps[idx]);
	flex_bps[idx] = NULL;
}

static int flex_dummy_thread(void *arg)
{
	return 0;
}

static struct task_struct *flex_task(struct kunit *test, int nr)
{
	struct task_struct *tsk;

	if (flex_tasks[nr])
		return flex_tasks[nr];

	tsk = kthread_create(flex_dummy_thread, NULL, "hw_bp_flex_%d", nr);
	KUNIT_ASSERT_FALSE(test, IS_ERR(tsk));
	flex_tasks[nr] = tsk;
	return tsk;
}

static int flex_cpu(int nr)
{
	int cpu;

	for_each_online_cpu(cpu) {
		if (nr-- <= 0)
			break;
	}
	return cpu;
}

/* ===== Test cases ===== */

static void test_task_flexible_beyond_slots(struct kunit *test)
{
	struct task_struct *tsk = flex_task(test, 0);

	flex_add_many(test, 2 * flex_slots(), -1, tsk, FLEX_FLEXIBLE);
	/* The flexible ones keep one register; pinned ones get the rest. */
	flex_add_many(test, flex_slots() - 1, -1, tsk, FLEX_PINNED);
	flex_expect_nospc(test, -1, tsk, FLEX_PINNED);
	flex_expect_nospc(test, flex_cpu(0), tsk, FLEX_PINNED);
	/* More flexible ones still take turns on the shared register. */
	flex_add(test, -1, tsk, FLEX_FLEXIBLE);
	flex_add(test, flex_cpu(1), tsk, FLEX_FLEXIBLE);
}

static void test_cpu_flexible_beyond_slots(struct kunit *test)
{
	const int cpu = flex_cpu(0);

	flex_add_many(test, 2 * flex_slots(), cpu, NULL, FLEX_FLEXIBLE);
	flex_add_many(test, flex_slots() - 1, cpu, NULL, FLEX_PINNED);
	flex_expect_nospc(test, cpu, NULL, FLEX_PINNED);
	flex_add(test, cpu, NULL, FLEX_FLEXIBLE);
	/* Another CPU is not affected. */
	flex_add_many(test, flex_slots(), flex_cpu(1), NULL, FLEX_PINNED);
	flex_expect_nospc(test, flex_cpu(1), NULL, FLEX_FLEXIBLE);
}

static void test_flexible_needs_a_register(struct kunit *test)
{
	struct task_struct *tsk = flex_task(test, 0);

	flex_add_many(test, flex_slots(), -1, tsk, FLEX_PINNED);
	/* Never a register left for them: refused, not accepted to starve. */
	flex_expect_nospc(test, -1, tsk, FLEX_FLEXIBLE);
	flex_expect_nospc(test, flex_cpu(0), tsk, FLEX_FLEXIBLE);
	flex_expect_nospc(test, flex_cpu(0), NULL, FLEX_FLEXIBLE);
	/* Another task runs with its own registers. */
	flex_add_many(test, 2 * flex_slots(), -1, flex_task(test, 1), FLEX_FLEXIBLE);
}

static void test_cpu_and_task_mixed(struct kunit *test)
{
	struct task_struct *tsk = flex_task(test, 0);
	const int cpu = flex_cpu(0);

	flex_add_many(test, flex_slots() - 2, cpu, NULL, FLEX_PINNED);
	flex_add_many(test, 3, -1, tsk, FLEX_FLEXIBLE);
	flex_add_many(test, 3, cpu, NULL, FLEX_FLEXIBLE);
	/* CPU pinned, the CPU's and the task's flexible share: all full. */
	flex_expect_nospc(test, cpu, NULL, FLEX_PINNED);
	flex_expect_nospc(test, -1, tsk, FLEX_PINNED);
	flex_expect_nospc(test, cpu, tsk, FLEX_PINNED);
	/* Flexible ones of the same weight fit in the shares they have. */
	flex_add(test, cpu, NULL, FLEX_FLEXIBLE);
	flex_add(test, cpu, tsk, FLEX_FLEXIBLE);
	/* The other CPU only has the task's flexible share taken. */
	flex_add_many(test, flex_slots() - 1, flex_cpu(1), tsk, FLEX_PINNED);
	flex_expect_nospc(test, flex_cpu(1), tsk, FLEX_PINNED);
}

static void test_task_on_one_cpu(struct kunit *test)
{
	struct task_struct *tsk = flex_task(test, 0);
	const int cpu = flex_cpu(0);

	flex_add_many(test, 2 * flex_slots(), cpu, tsk, FLEX_FLEXIBLE);
	flex_add_many(test, flex_slots() - 1, cpu, tsk, FLEX_PINNED);
	flex_expect_nospc(test, cpu, tsk, FLEX_PINNED);
	flex_expect_nospc(test, -1, tsk, FLEX_PINNED);
	/* On the other CPU the task has no breakpoint yet. */
	flex_add_many(test, flex_slots(), flex_cpu(1), tsk, FLEX_PINNED);
	flex_expect_nospc(test, flex_cpu(1), tsk, FLEX_FLEXIBLE);
}

static void test_release_returns_slots(struct kunit *test)
{
	struct task_struct *tsk = flex_task(test, 0);
	const int cpu = flex_cpu(0);
	int i, first;

	first = flex_nr_bps;
	flex_add_many(test, 2 * flex_slots(), -1, tsk, FLEX_FLEXIBLE);
	flex_add_many(test, 2 * flex_slots(), cpu, NULL, FLEX_FLEXIBLE);
	flex_add_many(test, flex_slots() - 2, -1, tsk, FLEX_PINNED);
	flex_expect_nospc(test, -1, tsk, FLEX_PINNED);
	flex_expect_nospc(test, cpu, NULL, FLEX_PINNED);

	/* Releasing some flexible ones keeps the share for the others. */
	flex_release(first);
	flex_release(first + 2 * flex_slots());
	flex_expect_nospc(test, -1, tsk, FLEX_PINNED);

	/* Releasing all of them gives their registers to pinned ones. */
	for (i = first; i < first + 4 * flex_slots(); i++) {
		if (flex_bps[i])
			flex_release(i);
	}
	flex_add(test, -1, tsk, FLEX_PINNED);
	flex_add(test, cpu, NULL, FLEX_PINNED);
	flex_expect_nospc(test, -1, tsk, FLEX_PINNED);
	flex_expect_nospc(test, cpu, NULL, FLEX_FLEXIBLE);
}

/*
 * Without bp_flexible a non-pinned breakpoint keeps a register as it always
 * did: the fifth gets -ENOSPC on a task and on a CPU, and plain ones leave
 * no register for a flexible one either.
 */
static void test_plain_task_keeps_a_register(struct kunit *test)
{
	struct task_struct *tsk = flex_task(test, 0);

	flex_add_many(test, flex_slots(), -1, tsk, FLEX_PLAIN);
	flex_expect_nospc(test, -1, tsk, FLEX_PLAIN);
	flex_expect_nospc(test, flex_cpu(0), tsk, FLEX_PLAIN);
	flex_expect_nospc(test, -1, tsk, FLEX_FLEXIBLE);
}

static void test_plain_cpu_keeps_a_register(struct kunit *test)
{
	const int cpu = flex_cpu(0);

	flex_add_many(test, flex_slots(), cpu, NULL, FLEX_PLAIN);
	flex_expect_nospc(test, cpu, NULL, FLEX_PLAIN);
	flex_expect_nospc(test, cpu, NULL, FLEX_FLEXIBLE);
}

/*
 * A breakpoint of @cpu the way kgdb_arch_late() makes its own at boot: created
 * disabled, with the slots it reserved given back at once.
 */
static void flex_debugger_create(struct kunit *test, int cpu)
{
	struct perf_event_attr attr;
	struct perf_event *bp;

	hw_breakpoint_init(&attr);
	attr.bp_addr = (unsigned long)&flex_vars[0];
	attr.bp_len = HW_BREAKPOINT_LEN_1;
	attr.bp_type = HW_BREAKPOINT_W;
	attr.disabled = 1;
	bp = perf_event_create_kernel_counter(&attr, cpu, NULL, NULL, NULL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(bp));
	release_bp_slot(bp);
	/* Its slots are the debugger's to reserve and give back now. */
	bp->destroy = NULL;
	flex_debugger = bp;
}

/*
 * Reserve the debugger's breakpoint with dbg_reserve_bp_slot(), install it
 * with arch_install_hw_breakpoint() without perf, as kgdb_correct_hw_break()
 * does when the CPUs leave the debugger, and take it back.  Return the
 * reservation's result; *@installed tells whether the install that follows a
 * reservation found a register.
 */
static int flex_debugger_try(bool *installed)
{
	int ret;

	*installed = false;
	local_irq_disable();
	ret = dbg_reserve_bp_slot(flex_debugger);
	if (!ret) {
		*installed = !arch_install_hw_breakpoint(flex_debugger);
		if (*installed)
			arch_uninstall_hw_breakpoint(flex_debugger);
		dbg_release_bp_slot(flex_debugger);
	}
	local_irq_enable();

	return ret;
}

/*
 * Keep the test on the CPU it runs on, and make the debugger's breakpoint of
 * that CPU before the test's flexible ones, as kgdb makes its own at boot:
 * while it is created its slot is counted, and creating it would reschedule
 * flexible ones already there to leave it a register.  Return the CPU.
 */
static int flex_debugger_setup(struct kunit *test)
{
	const int cpu = raw_smp_processor_id();

	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(cpu)), 0);
	flex_debugger_create(test, cpu);
	return cpu;
}

/* Add @nr flexible breakpoints of the test's own task, all scheduled in. */
static void flex_add_running(struct kunit *test, int nr)
{
	for (int i = 0; i < nr; i++) {
		int idx = flex_add(test, -1, current, FLEX_FLEXIBLE);

		KUNIT_ASSERT_EQ(test, flex_bps[idx]->state, PERF_EVENT_STATE_ACTIVE);
	}
}

/*
 * The debugger installs its breakpoints without letting perf take flexible
 * ones off the registers, so a task's flexible breakpoints that hold every
 * register leave it none, although the slots counted for them would: the
 * debugger must be refused then, and get a register while one is free.
 */
static void test_debugger_gets_a_free_register(struct kunit *test)
{
	bool installed;

	flex_debugger_setup(test);
	flex_add_running(test, flex_slots() - 1);
	KUNIT_EXPECT_EQ_MSG(test, flex_debugger_try(&installed), 0,
			    "refused with a register free");
	KUNIT_EXPECT_TRUE(test, installed);

	flex_add_running(test, 1);
	KUNIT_EXPECT_EQ_MSG(test, flex_debugger_try(&installed), -ENOSPC,
			    "reserved with every register taken, installed: %d",
			    installed);
}

/*
 * A reserved breakpoint of the task that is not scheduled in now, here a
 * disabled one, keeps the register the task's flexible ones left it: perf
 * may schedule it in without taking them off first.
 */
static void test_debugger_spares_task_reserved(struct kunit *test)
{
	bool installed;
	int idx;

	flex_debugger_setup(test);
	idx = flex_add(test, -1, current, FLEX_PINNED);
	perf_event_disable(flex_bps[idx]);
	flex_add_running(test, flex_slots() - 1);
	KUNIT_EXPECT_EQ_MSG(test, flex_debugger_try(&installed), -ENOSPC,
			    "took the register of a disabled pinned breakpoint");
}

/*
 * The CPU's flexible breakpoints keep the slots counted for them, even when
 * none is scheduled in now: a cgroup switch schedules them in while the
 * task's stay.
 */
static void test_debugger_spares_cpu_flexible(struct kunit *test)
{
	bool installed;
	int cpu, idx;

	cpu = flex_debugger_setup(test);
	idx = flex_add(test, cpu, NULL, FLEX_FLEXIBLE);
	perf_event_disable(flex_bps[idx]);
	flex_add_running(test, flex_slots() - 1);
	KUNIT_EXPECT_EQ_MSG(test, flex_debugger_try(&installed), -ENOSPC,
			    "took the slot of the CPU's flexible breakpoint");
}

/* What a task that closed its own last breakpoint saw. */
struct flex_self {
	struct completion done;
	int err;
	bool kept;	/* it still had counters */
	bool used;	/* hw_breakpoint_is_used() said so */
};

static int flex_self_thread(void *arg)
{
	struct perf_event *bp = flex_create(-1, current, FLEX_PLAIN);
	struct flex_self *self = arg;

	self->err = PTR_ERR_OR_ZERO(bp);
	if (!self->err) {
		unregister_hw_breakpoint(bp);
		self->kept = hw_breakpoint_task_has_counters(current);
		self->used = hw_breakpoint_is_used();
	}
	complete(&self->done);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

/*
 * Start a task that closes its own breakpoint and then waits to be stopped;
 * return it with a reference, its task_struct being the counters' key.
 */
static struct task_struct *flex_self_start(struct kunit *test,
					   struct flex_self *self)
{
	struct task_struct *tsk;

	init_completion(&self->done);
	tsk = kthread_run(flex_self_thread, self, "hw_bp_flex_self");
	KUNIT_ASSERT_FALSE(test, IS_ERR(tsk));
	get_task_struct(tsk);
	wait_for_completion(&self->done);
	KUNIT_EXPECT_EQ(test, self->err, 0);
	KUNIT_EXPECT_TRUE_MSG(test, self->kept, "counters freed with the last breakpoint");
	KUNIT_EXPECT_FALSE_MSG(test, self->used, "counters with no breakpoint count as used");
	return tsk;
}

/*
 * A task that closes its own last breakpoint keeps its slot counters for the
 * next one, counting nothing; they go when it exits, before kthread_stop()
 * returns (perf_event_exit_task() comes before the exit of its mm).
 */
static void test_task_counters_go_at_exit(struct kunit *test)
{
	struct flex_self self = { };
	struct task_struct *tsk = flex_self_start(test, &self);

	kthread_stop(tsk);
	KUNIT_EXPECT_FALSE_MSG(test, hw_breakpoint_task_has_counters(tsk),
			       "counters outlived their task");
	put_task_struct(tsk);
}

/*
 * Kept counters serve the next breakpoint, whoever opens it; when another
 * task closes that one, they go at once.
 */
static void test_task_counters_kept_then_reused(struct kunit *test)
{
	struct flex_self self = { };
	struct task_struct *tsk = flex_self_start(test, &self);
	int idx;

	idx = flex_add(test, -1, tsk, FLEX_PINNED);
	KUNIT_EXPECT_TRUE(test, hw_breakpoint_is_used());
	flex_release(idx);
	KUNIT_EXPECT_FALSE_MSG(test, hw_breakpoint_task_has_counters(tsk),
			       "counters kept after another task closed the last breakpoint");
	kthread_stop(tsk);
	put_task_struct(tsk);
}

/* Counters go at once when another task closes a task's last breakpoint. */
static void test_task_counters_go_with_last_of_other(struct kunit *test)
{
	struct task_struct *tsk = flex_task(test, 0);
	int idx;

	idx = flex_add(test, -1, tsk, FLEX_PINNED);
	KUNIT_EXPECT_TRUE(test, hw_breakpoint_task_has_counters(tsk));
	flex_release(idx);
	KUNIT_EXPECT_FALSE(test, hw_breakpoint_task_has_counters(tsk));
}

static struct kunit_case hw_breakpoint_flexible_cases[] = {
	KUNIT_CASE(test_plain_task_keeps_a_register),
	KUNIT_CASE(test_plain_cpu_keeps_a_register),
	KUNIT_CASE(test_task_flexible_beyond_slots),
	KUNIT_CASE(test_cpu_flexible_beyond_slots),
	KUNIT_CASE(test_flexible_needs_a_register),
	KUNIT_CASE(test_cpu_and_task_mixed),
	KUNIT_CASE(test_task_on_one_cpu),
	KUNIT_CASE(test_release_returns_slots),
	KUNIT_CASE(test_debugger_gets_a_free_register),
	KUNIT_CASE(test_debugger_spares_task_reserved),
	KUNIT_CASE(test_debugger_spares_cpu_flexible),
	KUNIT_CASE(test_task_counters_go_at_exit),
	KUNIT_CASE(test_task_counters_kept_then_reused),
	KUNIT_CASE(test_task_counters_go_with_last_of_other),
	{}
};

static int flex_test_init(struct kunit *test)
{
	if (!IS_ENABLED(CONFIG_HAVE_FLEXIBLE_HW_BREAKPOINT))
		kunit_skip(test, "this architecture has no flexible breakpoints");
	if (num_online_cpus() < 2)
		kunit_skip(test, "needs 2 online CPUs");
	if (flex_slots() < 2)
		kunit_skip(test, "needs 2 breakpoint slots");
	if (hw_breakpoint_is_used())
		kunit_skip(test, "breakpoints already in use elsewhere");

	flex_nr_bps = 0;
	return 0;
}

static void flex_test_exit(struct kunit *test)
{
	for (int i = 0; i < flex_nr_bps; i++) {
		if (flex_bps[i])
			flex_release(i);
	}
	if (flex_debugger)
		unregister_hw_breakpoint(flex_debugger);
	flex_debugger = NULL;
	for (int i = 0; i < ARRAY_SIZE(flex_tasks); i++) {
		if (flex_tasks[i])
			kthread_stop(flex_tasks[i]);
		flex_tasks[i] = NULL;
	}

	/* Every slot counted for a breakpoint was given back. */
	KUNIT_EXPECT_FALSE(test, hw_breakpoint_is_used());
}

static struct kunit_suite hw_breakpoint_flexible_suite = {
	.name = "hw_breakpoint_flexible",
	.init = flex_test_init,
	.exit = flex_test_exit,
	.test_cases = hw_breakpoint_flexible_cases,
};

kunit_test_suites(&hw_breakpoint_flexible_suite);

MODULE_DESCRIPTION("KUnit test for flexible hw_breakpoint slot accounting");
MODULE_LICENSE("GPL");
