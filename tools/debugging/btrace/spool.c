// SPDX-License-Identifier: GPL-2.0
/*
 * The record array of a thread.  A small one lives on the heap; one whose
 * room (doubled as it fills) reaches BT_SPOOL_MIN bytes, which happens
 * past 131072 records (--all on a long run), moves into a mapping of an
 * unlinked file in $TMPDIR (else /var/tmp), so that the records take disk
 * rather than memory: the kernel writes the pages back and reclaims them
 * as it needs (a tmpfs TMPDIR is memory, though).  The space is allocated
 * with fallocate() before it is mapped, so a full disk is an error
 * message, not a SIGBUS on a store; only where the file system cannot
 * allocate (EOPNOTSUPP: NFS without ALLOCATE, for one) is the file left
 * sparse.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "btrace.h"

/* 8 MiB: room for 262144 records. */
#define BT_SPOOL_MIN		(8UL << 20)

static const char *bt_spool_dir(void)
{
	const char *dir = getenv("TMPDIR");

	return dir && *dir ? dir : "/var/tmp";
}

/*
 * BTRACE_TEST_SPOOL=1, for tests: an array of 2048 records goes to the
 * file, so that the first 1024 records move there from the heap.
 */
static size_t bt_spool_min(void)
{
	const char *test = getenv("BTRACE_TEST_SPOOL");

	return test && !strcmp(test, "1") ? 2048 * sizeof(struct bts_struct) :
					    BT_SPOOL_MIN;
}

static void bt_spool_fail(const char *what, int err)
{
	bt_err("cannot keep the records in %s: %s: %s (%s)", bt_spool_dir(),
	       what, strerror(err),
	       err == EMFILE || err == ENFILE ?
	       "one file a thread: raise the limit of open files, ulimit -n" :
	       "set TMPDIR to a directory with room");
	exit(BT_EXIT_FAIL);
}

/* Make @fd @bytes long, with its blocks allocated where that can be. */
static void bt_spool_size(int fd, off_t old, off_t bytes)
{
	if (!fallocate(fd, 0, old, bytes - old))
		return;
	if (errno != EOPNOTSUPP)
		bt_spool_fail("fallocate", errno);
	if (ftruncate(fd, bytes))
		bt_spool_fail("ftruncate", errno);
}

/* An unlinked file: O_TMPFILE, else (a file system without it) mkstemp. */
static int bt_spool_open(void)
{
	const char *dir = bt_spool_dir();
	char *path;
	int fd;

	fd = open(dir, O_TMPFILE | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0 || errno != EOPNOTSUPP)
		goto out;
	path = bt_alloc(strlen(dir) + sizeof("/btrace.XXXXXX"));
	sprintf(path, "%s/btrace.XXXXXX", dir);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0 && unlink(path)) {
		close(fd);
		fd = -1;
	}
	free(path);
out:
	if (fd < 0)
		bt_spool_fail("a temporary file", errno);
	return fd;
}

/* Move the records of @th from the heap into a file of @bytes. */
static void bt_spool_start(struct bt_thread *th, size_t bytes)
{
	size_t used = th->nrecs * sizeof(*th->recs);
	void *p;

	th->spool_fd = bt_spool_open();
	bt_spool_size(th->spool_fd, 0, bytes);
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		 th->spool_fd, 0);
	if (p == MAP_FAILED)
		bt_spool_fail("mmap", errno);
	if (used)
		memcpy(p, th->recs, used);
	free(th->recs);
	th->recs = p;
	th->spooled = true;
}

/**
 * bt_recs_reserve() - make room for @cap records in a thread's array
 * @th: the thread; its records stay where they are in the array
 * @cap: the room wanted, at least its number of records
 *
 * Failures exit with a message: out of memory, or no room for the file.
 */
void bt_recs_reserve(struct bt_thread *th, u64 cap)
{
	size_t old = th->cap * sizeof(*th->recs);
	size_t bytes = cap * sizeof(*th->recs);
	void *p;

	if (cap <= th->cap)
		return;
	if (!th->spooled && bytes < bt_spool_min()) {
		th->recs = bt_grow(th->recs, bytes);
	} else if (!th->spooled) {
		bt_spool_start(th, bytes);
	} else {
		bt_spool_size(th->spool_fd, old, bytes);
		p = mremap(th->recs, old, bytes, MREMAP_MAYMOVE);
		if (p == MAP_FAILED)
			bt_spool_fail("mremap", errno);
		th->recs = p;
	}
	th->cap = cap;
}

/**
 * bt_recs_free() - free a thread's record array, wherever it is
 * @th: the thread; left with none
 */
void bt_recs_free(struct bt_thread *th)
{
	if (th->spooled) {
		munmap(th->recs, th->cap * sizeof(*th->recs));
		close(th->spool_fd);
	} else {
		free(th->recs);
	}
	th->recs = NULL;
	th->nrecs = 0;
	th->cap = 0;
	th->spooled = false;
}
