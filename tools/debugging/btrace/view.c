// SPDX-License-Identifier: GPL-2.0
/*
 * The two views of a thread's records: the function-call history (like
 * GDB's "record function-call-history /ilc") and the list of branches
 * (like "perf script -F ip,sym,symoff,addr,srcline").  Both read the
 * struct bt_trace only, for the live run and a saved file alike.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btrace.h"

/* The records an event shows and how to symbolize the first of them. */
struct bt_span {
	const struct bt_trace *t;
	const struct bt_thread *th;
	const struct bt_event *ev;
	u64 first;		/* index of the first record shown */
	u64 branches;	/* branches in all of the event's records */
	u64 shown;		/* of which shown */
	u32 epoch;		/* of the first record shown */
};

static u32 bt_span_mapset(const struct bt_span *sp, u32 epoch)
{
	if (epoch + 1 >= sp->ev->nepochs)
		return sp->ev->mapset;
	return sp->th->epochs[epoch];
}

static void bt_span_init(struct bt_span *sp, const struct bt_trace *t,
			 const struct bt_event *ev, u32 n)
{
	const struct bts_struct *r;
	u64 i;

	memset(sp, 0, sizeof(*sp));
	sp->t = t;
	sp->ev = ev;
	sp->th = t->threads[ev->thread];
	r = sp->th->recs;
	for (i = 0; i < ev->nrecs; i++)
		sp->branches += r[i].qualifier == BTS_BRANCH;
	for (sp->first = ev->nrecs; sp->first > 0; sp->first--) {
		if (n && sp->shown == n)
			break;
		sp->shown += r[sp->first - 1].qualifier == BTS_BRANCH;
	}
	for (i = 0; i < sp->first; i++)
		sp->epoch += r[i].qualifier == BTS_TASK_EXEC;
}

/* "name+0xoff", "[module+0xoff]" or "[unknown]". */
static void bt_put_sym(const struct bt_sym *s, u64 addr, bool off)
{
	if (s->name && off)
		printf("%s+0x%llx", s->name, s->off);
	else if (s->name)
		printf("%s", s->name);
	else if (s->module)
		printf("[%s+0x%llx]", s->module, s->off);
	else
		printf("[unknown 0x%llx]", addr);
}

/* Records that are not branches read the same in both views. */
static bool bt_put_other(const struct bts_struct *r, u64 k)
{
	switch (r->qualifier) {
	case BTS_BRANCH:
		return false;
	case BTS_TASK_EXEC:
		printf("[exec]");
		break;
	case BTS_TASK_ARRIVES:
		printf("[switched in at %llu ns]", (u64)r->clock);
		break;
	case BTS_TASK_DEPARTS:
		printf("[switched out at %llu ns]", (u64)r->clock);
		break;
	case BTS_LOST:
		/* Lost after the record before this one: before the next. */
		printf("[%llu branches lost before record %llu]",
		       (u64)r->clock, k + 1);
		break;
	default:
		printf("[record of kind %u]", r->qualifier);
	}
	return true;
}

static void bt_put_end(const struct bt_span *sp, u32 mapset,
		       u64 addr)
{
	struct bt_sym s = *bt_sym_lookup(sp->t, mapset, addr);

	printf("0x%llx ", addr);
	bt_put_sym(&s, addr, true);
	if (s.file)
		printf(" (%s:%d)", s.file, s.line);
}

static void bt_view_branches(const struct bt_span *sp)
{
	u32 epoch = sp->epoch;
	u64 i;

	for (i = sp->first; i < sp->ev->nrecs; i++) {
		const struct bts_struct *r = &sp->th->recs[i];
		u32 m = bt_span_mapset(sp, epoch);

		printf("%10llu  ", i + 1);
		if (bt_put_other(r, i + 1)) {
			epoch += r->qualifier == BTS_TASK_EXEC;
			putchar('\n');
			continue;
		}
		if (r->from)
			bt_put_end(sp, m, r->from);
		else
			printf("[kernel]");
		printf(" -> ");
		if (r->to)
			bt_put_end(sp, m, r->to);
		else
			printf("[kernel]");
		putchar('\n');
	}
}

/* One line of the function-call history. */
struct bt_call {
	const char *special;	/* "[kernel]", or NULL for a function */
	const struct bts_struct *rec;	/* a non-branch record, or NULL */
	struct bt_sym sym;	/* of the function */
	u64 addr;		/* an address in it */
	u64 key;		/* its start, to tell functions apart */
	u64 first, last;	/* record numbers, 1-based */
	const char *file;
	int lmin, lmax;
	int depth;
};

struct bt_calls {
	struct bt_call *c;
	size_t n;
	int depth;
	bool split;		/* the next block starts a new line */
};

static struct bt_call *bt_call_new(struct bt_calls *cs, u64 k)
{
	struct bt_call *c;

	cs->c = bt_grow(cs->c, (cs->n + 1) * sizeof(*c));
	c = &cs->c[cs->n++];
	memset(c, 0, sizeof(*c));
	c->depth = cs->depth;
	c->first = k;
	c->last = k;
	return c;
}

static void bt_call_line(struct bt_call *c, const struct bt_sym *s)
{
	if (!s->file || (c->file && strcmp(c->file, s->file)))
		return;
	if (!c->file || s->line < c->lmin)
		c->lmin = s->line;
	if (!c->file || s->line > c->lmax)
		c->lmax = s->line;
	c->file = s->file;
}

/* The code from the last branch's target up to branch @r, number @k. */
static void bt_call_block(struct bt_calls *cs, const struct bt_span *sp,
			  u32 m, const struct bts_struct *r, u64 k,
			  u64 start)
{
	struct bt_sym s = *bt_sym_lookup(sp->t, m, r->from);
	u64 key = s.func ? s.func : r->from;
	struct bt_call *c = cs->n ? &cs->c[cs->n - 1] : NULL;
	u8 kind = s.kind;

	if (!c || cs->split || c->special || c->rec || c->key != key) {
		c = bt_call_new(cs, k);
		c->sym = s;
		c->addr = r->from;
		c->key = key;
	}
	c->last = k;
	bt_call_line(c, &s);
	if (start) {
		s = *bt_sym_lookup(sp->t, m, start);
		if ((s.func ? s.func : start) == key)
			bt_call_line(c, &s);
	}
	cs->split = false;
	if (!r->to) {
		cs->depth++;
		bt_call_new(cs, k)->special = "[kernel]";
		cs->depth--;
		cs->split = true;
	} else if (kind == BT_INSN_CALL) {
		cs->depth++;
		cs->split = true;
	} else if (kind == BT_INSN_RET) {
		cs->depth--;
		cs->split = true;
	}
}

/* Where the last branch went: the code that ran until the event. */
static void bt_call_tail(struct bt_calls *cs, const struct bt_span *sp,
			 u32 m, u64 addr, u64 k)
{
	struct bt_sym s = *bt_sym_lookup(sp->t, m, addr);
	u64 key = s.func ? s.func : addr;
	struct bt_call *c = cs->n ? &cs->c[cs->n - 1] : NULL;

	if (!c || cs->split || c->special || c->rec || c->key != key) {
		c = bt_call_new(cs, k);
		c->sym = s;
		c->addr = addr;
		c->key = key;
	}
	bt_call_line(c, &s);
}

static void bt_calls_put(const struct bt_calls *cs)
{
	int min = 0;
	size_t i;

	for (i = 0; i < cs->n; i++)
		if (cs->c[i].depth < min)
			min = cs->c[i].depth;
	for (i = 0; i < cs->n; i++) {
		const struct bt_call *c = &cs->c[i];

		printf("%6zu\t%*s", i + 1, 2 * (c->depth - min), "");
		if (c->rec) {
			bt_put_other(c->rec, c->first);
			putchar('\n');
			continue;
		}
		if (c->special)
			printf("%s", c->special);
		else
			bt_put_sym(&c->sym, c->addr, false);
		printf("\trecords %llu,%llu", c->first, c->last);
		if (c->file)
			printf("\tat %s:%d-%d", c->file, c->lmin, c->lmax);
		putchar('\n');
	}
}

static void bt_view_calls(const struct bt_span *sp)
{
	struct bt_calls cs = { 0 };
	u32 epoch = sp->epoch;
	u64 i, start = 0;

	for (i = sp->first; i < sp->ev->nrecs; i++) {
		const struct bts_struct *r = &sp->th->recs[i];

		if (r->qualifier != BTS_BRANCH) {
			bt_call_new(&cs, i + 1)->rec = r;
			epoch += r->qualifier == BTS_TASK_EXEC;
			cs.split = true;
			start = 0;
			continue;
		}
		if (r->from)
			bt_call_block(&cs, sp, bt_span_mapset(sp, epoch), r,
				      i + 1, start);
		start = r->to;
	}
	if (start)
		bt_call_tail(&cs, sp, bt_span_mapset(sp, epoch), start,
			     sp->ev->nrecs);
	bt_calls_put(&cs);
	free(cs.c);
}

static const char *bt_signame(int sig)
{
	const char *abbrev = sigabbrev_np(sig);
	static char buf[32];

	if (abbrev)
		snprintf(buf, sizeof(buf), "SIG%s", abbrev);
	else
		snprintf(buf, sizeof(buf), "signal %d", sig);
	return buf;
}

static void bt_header(const struct bt_trace *t, const struct bt_event *ev,
		      const struct bt_span *sp)
{
	const struct bt_thread *th = t->threads[ev->thread];

	printf("btrace: thread %u (%s) ", th->tid, th->comm);
	switch (ev->kind) {
	case BT_EV_CRASH:
		printf("got %s (%s)", bt_signame(ev->signo),
		       strsignal(ev->signo));
		/* Only a fault's si_code has an address: not SI_KERNEL (#GP). */
		if (ev->code > 0 && ev->code != SI_KERNEL)
			printf(" at address 0x%llx", ev->addr);
		break;
	case BT_EV_EXIT:
		printf("exited");
		break;
	default:
		printf("detached");
	}
	printf(": the last %llu of %llu branches%s\n", sp->shown,
	       sp->branches, t->all ? "" : " kept");
}

/**
 * bt_view_event() - print the report of an event
 * @t: the trace
 * @ev: one of its events
 * @v: which view, and how many branches
 */
void bt_view_event(const struct bt_trace *t, const struct bt_event *ev,
		   const struct bt_view *v)
{
	struct bt_span sp;
	int st = ev->status;

	if (ev->kind == BT_EV_END) {
		printf("btrace: process %u exited with status %d", ev->tid, st);
		if (st > 128 && st < 128 + 65)
			printf(" (128 + %s)", bt_signame(st - 128));
		putchar('\n');
		return;
	}
	if (ev->thread >= t->nthreads)
		return;
	bt_span_init(&sp, t, ev, v->nbranches);
	bt_header(t, ev, &sp);
	if (v->branches)
		bt_view_branches(&sp);
	else
		bt_view_calls(&sp);
}
