// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the orphans of arch/x86/kernel/ptrace_bts.c: which
 * traces left by a tracer that went away a failed PTRACE_BTS_CONFIG frees.
 *
 * From user space the reaper, freeing orphans meanwhile, cannot be told
 * apart from a CONFIG that frees too many.  Here each case has an
 * orphanage of its own whose reaper runs only when the case says: the
 * orphans are traces with nothing configured, charged to two users.
 */

#include <kunit/test.h>
#include <linux/cred.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>
#include <linux/user_namespace.h>
#include <linux/workqueue.h>

#include "ptrace_bts_internal.h"

/* A user other than the one cases run as, root (kthreads have init_cred). */
#define PTRACE_BTS_TEST_OTHER_UID	65534

struct ptrace_bts_test {
	struct ptrace_bts_orphanage orphans;
	struct ucounts *mine;	/* the test's user, as a CONFIG's */
	struct ucounts *other;	/* another user of the initial namespace */
};

static struct ptrace_bts_test *test_ctx(struct kunit *test)
{
	return test->priv;
}

/*
 * An orphan of @task charged to @ucounts (none if %NULL).  It is in the
 * orphanage before anything is checked, so that the case's exit frees it
 * whatever happens.
 */
static struct ptrace_bts *make_orphan(struct kunit *test,
				      struct task_struct *task,
				      struct ucounts *ucounts)
{
	struct ptrace_bts *bts = ptrace_bts_alloc(task);

	KUNIT_ASSERT_NOT_NULL(test, bts);
	if (ucounts)
		bts->ucounts = get_ucounts(ucounts);
	ptrace_bts_adopt(&test_ctx(test)->orphans, bts);
	KUNIT_ASSERT_TRUE(test, !ucounts || bts->ucounts);
	return bts;
}

/* What a CONFIG that tries now knows. */
static struct ptrace_bts_orphans_seen seen_now(struct kunit *test)
{
	struct ptrace_bts_orphanage *o = &test_ctx(test)->orphans;
	struct ptrace_bts_orphans_seen seen;

	spin_lock_irq(&o->lock);
	seen.freed = o->freed;
	seen.last = o->made;
	spin_unlock_irq(&o->lock);
	return seen;
}

static bool is_orphan(struct kunit *test, const struct ptrace_bts *bts)
{
	struct ptrace_bts_orphanage *o = &test_ctx(test)->orphans;
	const struct ptrace_bts *pos;
	bool found = false;

	spin_lock_irq(&o->lock);
	list_for_each_entry(pos, &o->list, orphan_node)
		found |= pos == bts;
	spin_unlock_irq(&o->lock);
	return found;
}

static size_t nr_orphans(struct kunit *test)
{
	struct ptrace_bts_orphanage *o = &test_ctx(test)->orphans;
	size_t n;

	spin_lock_irq(&o->lock);
	n = list_count_nodes(&o->list);
	spin_unlock_irq(&o->lock);
	return n;
}

/*
 * One try of a CONFIG of @child, as the test's user, that first tried
 * when orphan number @last was the last made.  Like the CONFIG, it reads
 * the count of freed orphans before it tries.
 */
static enum ptrace_bts_freed try_config(struct kunit *test,
					struct task_struct *child,
					enum ptrace_bts_want want, u64 last)
{
	struct ptrace_bts_test *ctx = test_ctx(test);
	struct ptrace_bts_orphans_seen seen = seen_now(test);

	seen.last = last;
	return ptrace_bts_free_orphan_in_the_way(&ctx->orphans, child, want,
						 ptrace_bts_charge_root(ctx->mine),
						 &seen);
}

/* ENOMEM frees the orphans charged to its user, oldest first, and no other. */
static void test_user_want_frees_only_its_users(struct kunit *test)
{
	struct ptrace_bts_test *ctx = test_ctx(test);
	struct ptrace_bts *a, *b, *c, *d;
	u64 last;

	a = make_orphan(test, current, ctx->mine);
	b = make_orphan(test, current, ctx->other);
	c = make_orphan(test, current, ctx->mine);
	d = make_orphan(test, current, NULL);
	last = seen_now(test).last;

	KUNIT_EXPECT_EQ(test, PTRACE_BTS_FREED_IN_THE_WAY,
			try_config(test, current, PTRACE_BTS_WANT_USER, last));
	KUNIT_EXPECT_FALSE(test, is_orphan(test, a));
	KUNIT_EXPECT_TRUE(test, is_orphan(test, c));
	KUNIT_EXPECT_EQ(test, PTRACE_BTS_FREED_IN_THE_WAY,
			try_config(test, current, PTRACE_BTS_WANT_USER, last));
	KUNIT_EXPECT_FALSE(test, is_orphan(test, c));
	KUNIT_EXPECT_EQ(test, PTRACE_BTS_FREED_NOTHING,
			try_config(test, current, PTRACE_BTS_WANT_USER, last));
	KUNIT_EXPECT_TRUE(test, is_orphan(test, b));
	KUNIT_EXPECT_TRUE(test, is_orphan(test, d));
	KUNIT_EXPECT_EQ(test, 2, nr_orphans(test));
}

/*
 * EBUSY frees the orphans of its tracee, oldest first, whoever was charged,
 * and no other.
 */
static void test_bts_want_frees_only_its_tracees(struct kunit *test)
{
	struct ptrace_bts_test *ctx = test_ctx(test);
	struct ptrace_bts *a, *b, *c, *d;
	u64 last;

	a = make_orphan(test, &init_task, ctx->mine);
	b = make_orphan(test, current, ctx->other);
	c = make_orphan(test, &init_task, NULL);
	d = make_orphan(test, current, NULL);
	last = seen_now(test).last;

	KUNIT_EXPECT_EQ(test, PTRACE_BTS_FREED_IN_THE_WAY,
			try_config(test, current, PTRACE_BTS_WANT_BTS, last));
	KUNIT_EXPECT_FALSE(test, is_orphan(test, b));
	KUNIT_EXPECT_TRUE(test, is_orphan(test, d));
	KUNIT_EXPECT_EQ(test, PTRACE_BTS_FREED_IN_THE_WAY,
			try_config(test, current, PTRACE_BTS_WANT_BTS, last));
	KUNIT_EXPECT_FALSE(test, is_orphan(test, d));
	KUNIT_EXPECT_EQ(test, PTRACE_BTS_FREED_NOTHING,
			try_config(test, current, PTRACE_BTS_WANT_BTS, last));
	KUNIT_EXPECT_TRUE(test, is_orphan(test, a));
	KUNIT_EXPECT_TRUE(test, is_orphan(test, c));
}

/* Orphans made after a CONFIG first tried are not its business. */
static void test_later_orphans_left(struct kunit *test)
{
	struct ptrace_bts_test *ctx = test_ctx(test);
	struct ptrace_bts *late;
	u64 last;

	make_orphan(test, &init_task, ctx->other);
	last = seen_now(test).last;
	late = make_orphan(test, current, ctx->mine);

	KUNIT_EXPECT_EQ(test, PTRACE_BTS_FREED_NOTHING,
			try_config(test, current, PTRACE_BTS_WANT_BTS, last));
	KUNIT_EXPECT_EQ(test, PTRACE_BTS_FREED_NOTHING,
			try_config(test, current, PTRACE_BTS_WANT_USER, last));
	KUNIT_EXPECT_TRUE(test, is_orphan(test, late));
	KUNIT_EXPECT_EQ(test, 2, nr_orphans(test));
}

/* The last orphan made before a CONFIG first tried is its business. */
static void test_last_seen_orphan_freed(struct kunit *test)
{
	struct ptrace_bts_test *ctx = test_ctx(test);
	struct ptrace_bts *bts;
	u64 last;

	make_orphan(test, &init_task, ctx->mine);
	bts = make_orphan(test, current, ctx->mine);
	last = seen_now(test).last;

	KUNIT_EXPECT_EQ(test, PTRACE_BTS_FREED_IN_THE_WAY,
			try_config(test, current, PTRACE_BTS_WANT_BTS, last));
	KUNIT_EXPECT_FALSE(test, is_orphan(test, bts));
}

/*
 * A charge in a user namespace counts against the namespace's owner, up
 * to a user of the initial namespace: that user is the root both a
 * CONFIG's user and an orphan's charge are compared by.  Two levels of
 * namespaces owned by the test's user, made up for the walk alone.
 */
static void test_charge_root_through_user_ns(struct kunit *test)
{
	struct ptrace_bts_test *ctx = test_ctx(test);
	struct user_namespace *ns[2];
	struct ucounts *user[2];
	int i;

	for (i = 0; i < 2; i++) {
		ns[i] = kunit_kzalloc(test, sizeof(*ns[i]), GFP_KERNEL);
		user[i] = kunit_kzalloc(test, sizeof(*user[i]), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, ns[i]);
		KUNIT_ASSERT_NOT_NULL(test, user[i]);
		user[i]->ns = ns[i];
	}
	ns[0]->ucounts = ctx->mine;
	ns[1]->ucounts = user[0];

	KUNIT_EXPECT_PTR_EQ(test, ctx->mine, ptrace_bts_charge_root(ctx->mine));
	KUNIT_EXPECT_PTR_EQ(test, ctx->mine, ptrace_bts_charge_root(user[0]));
	KUNIT_EXPECT_PTR_EQ(test, ctx->mine, ptrace_bts_charge_root(user[1]));
	ns[0]->ucounts = ctx->other;
	KUNIT_EXPECT_PTR_EQ(test, ctx->other, ptrace_bts_charge_root(user[1]));
}

/*
 * An orphan freed by someone else between a CONFIG's try and its look at
 * the list may have been the one in its way: the CONFIG is told, to try
 * once more.
 */
static void test_freed_elsewhere_told(struct kunit *test)
{
	struct ptrace_bts_test *ctx = test_ctx(test);
	struct ptrace_bts_orphans_seen seen;
	struct ptrace_bts *keep;

	make_orphan(test, current, ctx->mine);
	keep = make_orphan(test, &init_task, ctx->other);
	/* The CONFIG tries, and fails. */
	seen = seen_now(test);

	/* The reaper frees the orphan in its way before it looks. */
	KUNIT_EXPECT_EQ(test, PTRACE_BTS_FREED_IN_THE_WAY,
			try_config(test, NULL, PTRACE_BTS_WANT_ANY, seen.last));
	KUNIT_EXPECT_EQ(test, PTRACE_BTS_FREED_ELSEWHERE,
			ptrace_bts_free_orphan_in_the_way(&ctx->orphans, current,
							  PTRACE_BTS_WANT_BTS,
							  ptrace_bts_charge_root(ctx->mine),
							  &seen));
	KUNIT_EXPECT_TRUE(test, is_orphan(test, keep));
}

/* The reaper frees every orphan, whoever it belongs to. */
static void test_reaper_frees_all(struct kunit *test)
{
	struct ptrace_bts_test *ctx = test_ctx(test);
	struct ptrace_bts_orphanage *o = &ctx->orphans;

	make_orphan(test, current, ctx->mine);
	make_orphan(test, &init_task, ctx->other);
	make_orphan(test, current, NULL);

	schedule_work(&o->reaper);
	flush_work(&o->reaper);
	KUNIT_EXPECT_EQ(test, 0, nr_orphans(test));
	KUNIT_EXPECT_EQ(test, 3, READ_ONCE(o->freed));
}

static int ptrace_bts_test_init(struct kunit *test)
{
	struct ptrace_bts_test *ctx;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	ptrace_bts_orphanage_init(&ctx->orphans);
	ctx->mine = get_ucounts(current_ucounts());
	ctx->other = alloc_ucounts(&init_user_ns,
				   KUIDT_INIT(PTRACE_BTS_TEST_OTHER_UID));
	test->priv = ctx;
	if (!ctx->mine || !ctx->other)
		return -ENOMEM;
	return 0;
}

/* Free what a case left, and check that every orphan made was freed. */
static void ptrace_bts_test_exit(struct kunit *test)
{
	struct ptrace_bts_test *ctx = test_ctx(test);

	if (!ctx)
		return;
	schedule_work(&ctx->orphans.reaper);
	flush_work(&ctx->orphans.reaper);
	KUNIT_EXPECT_EQ(test, 0, nr_orphans(test));
	KUNIT_EXPECT_EQ(test, ctx->orphans.made, (u64)ctx->orphans.freed);
	if (ctx->mine)
		put_ucounts(ctx->mine);
	if (ctx->other)
		put_ucounts(ctx->other);
}

static struct kunit_case ptrace_bts_test_cases[] = {
	KUNIT_CASE(test_user_want_frees_only_its_users),
	KUNIT_CASE(test_bts_want_frees_only_its_tracees),
	KUNIT_CASE(test_later_orphans_left),
	KUNIT_CASE(test_last_seen_orphan_freed),
	KUNIT_CASE(test_charge_root_through_user_ns),
	KUNIT_CASE(test_freed_elsewhere_told),
	KUNIT_CASE(test_reaper_frees_all),
	{}
};

static struct kunit_suite ptrace_bts_test_suite = {
	.name = "x86_ptrace_bts",
	.init = ptrace_bts_test_init,
	.exit = ptrace_bts_test_exit,
	.test_cases = ptrace_bts_test_cases,
};

kunit_test_suite(ptrace_bts_test_suite);

MODULE_DESCRIPTION("KUnit tests of the orphans of PTRACE_BTS_*");
MODULE_LICENSE("GPL");
