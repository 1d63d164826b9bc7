// SPDX-License-Identifier: GPL-2.0
/*
 * Save and load a struct bt_trace: the format is in README, FORMAT.
 * Everything is little-endian, as the machines that have BTS are.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "btrace.h"

#define BT_MAGIC	"BTRACE\r\n"
#define BT_VERSION	1
#define BT_F_ALL	0x1

struct bt_file_header {
	char magic[8];
	u32 version;
	u32 flags;
	u32 nbranches;
	u32 nmapsets;
	u32 nthreads;
	u32 nevents;
};

struct bt_file_mapset {
	u32 tgid;
	u32 maps_len;
	u32 buildids_len;
	u32 pad;
};

struct bt_file_thread {
	u32 tid;
	u32 tgid;
	char comm[16];
	u32 nepochs;
	u32 pad;
	u64 nrecs;
};

/* Write @len bytes; the first failure is kept in *@err as an errno. */
static int bt_put(FILE *f, const void *p, size_t len, int *err)
{
	if (*err || !len || fwrite(p, len, 1, f) == 1)
		return *err;
	*err = errno ? errno : EIO;
	return *err;
}

static int bt_save_body(const struct bt_trace *t, FILE *f, int *err)
{
	u32 i;

	for (i = 0; i < t->nmapsets; i++) {
		const struct bt_mapset *m = &t->mapsets[i];
		struct bt_file_mapset fm = {
			.tgid = m->tgid,
			.maps_len = strlen(m->maps),
			.buildids_len = m->buildids ? strlen(m->buildids) : 0,
		};

		bt_put(f, &fm, sizeof(fm), err);
		bt_put(f, m->maps, fm.maps_len, err);
		bt_put(f, m->buildids, fm.buildids_len, err);
	}
	for (i = 0; i < t->nthreads; i++) {
		const struct bt_thread *th = t->threads[i];
		struct bt_file_thread ft = {
			.tid = th->tid,
			.tgid = th->tgid,
			.nepochs = th->nepochs,
			.nrecs = th->nrecs,
		};

		memcpy(ft.comm, th->comm, sizeof(ft.comm));
		bt_put(f, &ft, sizeof(ft), err);
		bt_put(f, th->epochs, th->nepochs * sizeof(*th->epochs), err);
		bt_put(f, th->recs, th->nrecs * sizeof(*th->recs), err);
	}
	return bt_put(f, t->events, t->nevents * sizeof(*t->events), err);
}

/**
 * bt_file_save() - write a trace to a file
 * @t: the trace
 * @path: the file
 *
 * Return: 0, or -1 with a message.
 */
int bt_file_save(const struct bt_trace *t, const char *path)
{
	struct bt_file_header h = {
		.magic = BT_MAGIC,
		.version = BT_VERSION,
		.flags = t->all ? BT_F_ALL : 0,
		.nbranches = t->nbranches,
		.nmapsets = t->nmapsets,
		.nthreads = t->nthreads,
		.nevents = t->nevents,
	};
	FILE *f = fopen(path, "wb");
	int err = 0;

	if (!f) {
		bt_err("cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	errno = 0;
	bt_put(f, &h, sizeof(h), &err);
	bt_save_body(t, f, &err);
	if (fclose(f) && !err)
		err = errno ? errno : EIO;
	if (err) {
		bt_err("cannot write %s: %s", path, strerror(err));
		return -1;
	}
	return 0;
}

/* A file being loaded, and how many of its bytes are left to read. */
struct bt_in {
	FILE *f;
	u64 left;
};

/*
 * Whether the file still holds @n items of @size bytes: checked before
 * each allocation, so that a header cannot make the loader allocate what
 * the file does not have.
 */
static bool bt_has(const struct bt_in *in, u64 n, size_t size)
{
	return n <= in->left / size;
}

static int bt_get(struct bt_in *in, void *p, size_t len)
{
	if (!len)
		return 0;
	if (len > in->left || fread(p, len, 1, in->f) != 1)
		return -1;
	in->left -= len;
	return 0;
}

/* The first step of bt_get_grown(); each later one doubles what it has. */
#define BT_GROW_FIRST	(64 << 10)

/*
 * @len bytes, then @extra zeroed ones, in new memory grown as the bytes
 * arrive: read from a pipe, whose size is not known, a corrupt length
 * costs no more than twice the bytes that do come.  %NULL if fewer come.
 */
static void *bt_get_grown(struct bt_in *in, u64 len, size_t extra)
{
	size_t have = 0, room = 0;
	char *p = NULL;

	if (!bt_has(in, len, 1) || len > SIZE_MAX - extra)
		return NULL;
	while (have < len) {
		room = room ? 2 * room : BT_GROW_FIRST;
		if (room > len)
			room = len;
		p = bt_grow(p, room);
		if (bt_get(in, p + have, room - have)) {
			free(p);
			return NULL;
		}
		have = room;
	}
	p = bt_grow(p, len + extra);
	memset(p + len, 0, extra);
	return p;
}

static char *bt_get_text(struct bt_in *in, u32 len)
{
	return bt_get_grown(in, len, 1);
}

/*
 * The records of @th, in chunks: read from a pipe, whose size is not
 * known, a corrupt count makes room (on the heap or in TMPDIR) only for
 * the records that do arrive.
 */
static int bt_load_recs(struct bt_thread *th, struct bt_in *in, u64 n)
{
	struct bts_struct chunk[1024];
	u64 k;

	while (n) {
		k = n < ARRAY_SIZE(chunk) ? n : ARRAY_SIZE(chunk);
		if (bt_get(in, chunk, k * sizeof(chunk[0])))
			return -1;
		bt_thread_append(th, chunk, k);
		n -= k;
	}
	return 0;
}

static int bt_load_thread(struct bt_trace *t, struct bt_in *in)
{
	struct bt_file_thread ft;
	struct bt_thread *th;
	u32 i;

	if (bt_get(in, &ft, sizeof(ft)) ||
	    !bt_has(in, ft.nepochs, sizeof(*th->epochs)) ||
	    !bt_has(in, ft.nrecs, sizeof(*th->recs)) ||
	    !bt_has(in, ft.nepochs * sizeof(*th->epochs) +
		    ft.nrecs * sizeof(*th->recs), 1))
		return -1;
	th = bt_thread_add(t, ft.tid, ft.tgid);
	memcpy(th->comm, ft.comm, sizeof(th->comm));
	th->comm[sizeof(th->comm) - 1] = '\0';
	th->epochs = bt_get_grown(in, (u64)ft.nepochs * sizeof(*th->epochs),
				  0);
	if (!th->epochs)
		return -1;
	th->nepochs = ft.nepochs;
	if (bt_load_recs(th, in, ft.nrecs))
		return -1;
	for (i = 0; i < th->nepochs; i++)
		if (th->epochs[i] >= t->nmapsets)
			return -1;
	return 0;
}

static int bt_load_events(struct bt_trace *t, struct bt_in *in, u32 n)
{
	u32 i;

	if (!bt_has(in, n, sizeof(*t->events)))
		return -1;
	t->events = bt_get_grown(in, (u64)n * sizeof(*t->events), 0);
	if (!t->events)
		return -1;
	t->nevents = n;
	for (i = 0; i < t->nevents; i++) {
		const struct bt_event *ev = &t->events[i];

		if (ev->kind == BT_EV_END)
			continue;
		if (ev->thread >= t->nthreads || ev->mapset >= t->nmapsets ||
		    ev->nrecs > t->threads[ev->thread]->nrecs ||
		    ev->nepochs > t->threads[ev->thread]->nepochs)
			return -1;
	}
	return 0;
}

static int bt_load_body(struct bt_trace *t, struct bt_in *in,
			const struct bt_file_header *h)
{
	u32 i;

	/* Each mapset and thread takes at least its fixed part. */
	if (!bt_has(in, h->nmapsets, sizeof(struct bt_file_mapset)) ||
	    !bt_has(in, h->nthreads, sizeof(struct bt_file_thread)))
		return -1;
	for (i = 0; i < h->nmapsets; i++) {
		struct bt_file_mapset fm;
		char *maps, *ids;

		if (bt_get(in, &fm, sizeof(fm)))
			return -1;
		maps = bt_get_text(in, fm.maps_len);
		ids = maps ? bt_get_text(in, fm.buildids_len) : NULL;
		if (!ids) {
			free(maps);
			return -1;
		}
		bt_mapset_add(t, fm.tgid, maps, ids);
	}
	for (i = 0; i < h->nthreads; i++)
		if (bt_load_thread(t, in))
			return -1;
	return bt_load_events(t, in, h->nevents);
}

/**
 * bt_file_load() - read a trace that bt_file_save() wrote
 * @t: an empty trace to fill
 * @path: the file
 *
 * Return: 0, or -1 with a message (@t is then to be freed).
 */
int bt_file_load(struct bt_trace *t, const char *path)
{
	struct bt_in in = { .f = fopen(path, "rb") };
	struct bt_file_header h;
	struct stat st;
	int err;

	if (!in.f || fstat(fileno(in.f), &st)) {
		bt_err("cannot read %s: %s", path, strerror(errno));
		if (in.f)
			fclose(in.f);
		return -1;
	}
	/* A pipe's length is not known: only a regular file is checked. */
	in.left = S_ISREG(st.st_mode) ? (u64)st.st_size : ~0ULL;
	err = bt_get(&in, &h, sizeof(h));
	if (!err && (memcmp(h.magic, BT_MAGIC, 8) || h.version != BT_VERSION)) {
		bt_err("%s is not a btrace file of version %d", path,
		       BT_VERSION);
		fclose(in.f);
		return -1;
	}
	t->nbranches = h.nbranches;
	t->all = h.flags & BT_F_ALL;
	if (!err)
		err = bt_load_body(t, &in, &h);
	fclose(in.f);
	if (err)
		bt_err("%s is truncated or corrupt", path);
	return err ? -1 : 0;
}
