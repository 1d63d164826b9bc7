// SPDX-License-Identifier: GPL-2.0
/*
 * The in-memory trace: threads, their records, mapsets and events.
 * Both the live run and a loaded file fill it; views only read it.
 */
#include <stdlib.h>
#include <string.h>

#include "btrace.h"

/**
 * bt_thread_add() - start a new thread
 * @t: the trace
 * @tid: its thread id
 * @tgid: its process
 *
 * Return: the thread (allocation failures exit).
 */
struct bt_thread *bt_thread_add(struct bt_trace *t, u32 tid,
				u32 tgid)
{
	struct bt_thread *th = bt_alloc(sizeof(*th));

	th->idx = t->nthreads;
	th->tid = tid;
	th->tgid = tgid;
	t->threads = bt_grow(t->threads, (t->nthreads + 1) * sizeof(th));
	t->threads[t->nthreads++] = th;
	return th;
}

/**
 * bt_thread_append() - add records to a thread, after those it has
 * @th: the thread
 * @recs: the records, oldest first
 * @n: how many
 */
void bt_thread_append(struct bt_thread *th, const struct bts_struct *recs,
		      u64 n)
{
	if (th->nrecs + n > th->cap) {
		u64 cap = th->cap ? th->cap : 1024;

		while (cap < th->nrecs + n)
			cap *= 2;
		bt_recs_reserve(th, cap);
	}
	memcpy(th->recs + th->nrecs, recs, n * sizeof(*recs));
	th->nrecs += n;
}

/**
 * bt_thread_epoch() - set the mapset of the thread's program
 * @th: the thread
 * @mapset: the mapset
 * @replace: a newer mapset of its current program, not a new program
 */
void bt_thread_epoch(struct bt_thread *th, u32 mapset, bool replace)
{
	if (replace && th->nepochs) {
		th->epochs[th->nepochs - 1] = mapset;
		return;
	}
	th->epochs = bt_grow(th->epochs, (th->nepochs + 1) * sizeof(mapset));
	th->epochs[th->nepochs++] = mapset;
}

/**
 * bt_mapset_add() - keep a snapshot of a process's file mappings
 * @t: the trace
 * @tgid: the process
 * @maps: its maps lines (taken over)
 * @buildids: their build-ids (taken over)
 *
 * Return: the id of the new mapset.
 */
u32 bt_mapset_add(struct bt_trace *t, u32 tgid, char *maps,
		  char *buildids)
{
	struct bt_mapset *m;

	t->mapsets = bt_grow(t->mapsets, (t->nmapsets + 1) * sizeof(*m));
	m = &t->mapsets[t->nmapsets];
	m->id = t->nmapsets++;
	m->tgid = tgid;
	m->maps = maps;
	m->buildids = buildids;
	return m->id;
}

/**
 * bt_event_add() - note an event of a thread, as it is now
 * @t: the trace
 * @kind: an &enum bt_event_kind
 * @th: the thread, or NULL for BT_EV_END
 *
 * Return: the event, for the caller to fill in the rest.
 */
struct bt_event *bt_event_add(struct bt_trace *t, u32 kind,
			      struct bt_thread *th)
{
	struct bt_event *ev;

	t->events = bt_grow(t->events, (t->nevents + 1) * sizeof(*ev));
	ev = &t->events[t->nevents++];
	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	if (th) {
		ev->thread = th->idx;
		ev->tid = th->tid;
		ev->nrecs = th->nrecs;
		ev->nepochs = th->nepochs;
		ev->mapset = th->nepochs ? th->epochs[th->nepochs - 1] : 0;
	}
	return ev;
}

/**
 * bt_trace_free() - free everything a trace holds
 * @t: the trace, left empty
 */
void bt_trace_free(struct bt_trace *t)
{
	u32 i;

	for (i = 0; i < t->nthreads; i++) {
		bt_recs_free(t->threads[i]);
		free(t->threads[i]->epochs);
		free(t->threads[i]);
	}
	for (i = 0; i < t->nmapsets; i++) {
		free(t->mapsets[i].maps);
		free(t->mapsets[i].buildids);
	}
	free(t->threads);
	free(t->mapsets);
	free(t->events);
	memset(t, 0, sizeof(*t));
}
