/* SPDX-License-Identifier: GPL-2.0 */
/*
 * btrace: the branch trace of a program, from the PTRACE_BTS_* requests.
 *
 * One in-memory structure, struct bt_trace, holds everything a report
 * needs: the records of every thread, the memory maps of every program
 * they ran, and what happened to them (struct bt_event).  The live run
 * renders its events from it as they happen, and file.c saves and loads
 * exactly it, so that "btrace report FILE" prints what the run printed.
 */
#ifndef BTRACE_H
#define BTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>
#include <asm/ptrace-bts.h>

typedef __u8 u8;
typedef __u32 u32;
typedef __s32 s32;
typedef __u64 u64;

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Exit codes of btrace itself; see btrace.1, EXIT STATUS. */
#define BT_EXIT_USAGE		2
#define BT_EXIT_MEMLOCK		122
#define BT_EXIT_PERM		123
#define BT_EXIT_NOBTS		124
#define BT_EXIT_FAIL		125
#define BT_EXIT_NOEXEC		126
#define BT_EXIT_NOENT		127

/* Synthetic records; the kernel's qualifiers end at BTS_LOST. */
#define BT_REC_EXEC		BTS_TASK_EXEC	/* added at an exec stop */

/**
 * struct bt_mapset - the file mappings of one program of one process
 * @id: index in bt_trace.mapsets
 * @tgid: the process
 * @maps: lines of /proc/PID/maps naming a file, sorted by address
 * @buildids: "HEX PATH" lines, one per file of @maps that has a build-id
 *
 * A mapset never changes once an event refers to it: a later snapshot
 * that finds new mappings (dlopen) makes a new mapset.
 */
struct bt_mapset {
	u32 id;
	u32 tgid;
	char *maps;
	char *buildids;
};

/**
 * struct bt_thread - one traced thread
 * @tid: its thread id
 * @tgid: its process
 * @comm: its name when it was last seen
 * @recs: its records, oldest first; BTS_TASK_EXEC ones start a program
 * @nrecs: number of @recs
 * @cap: room in @recs
 * @spooled: @recs maps @spool_fd, an unlinked file (spool.c), not the heap
 * @spool_fd: that file
 * @epochs: the mapset of each program it ran, in order; the last one
 *	may still be replaced by a newer mapset of the same program
 * @nepochs: number of @epochs
 * @idx: its index in bt_trace.threads
 */
struct bt_thread {
	u32 idx;
	u32 tid;
	u32 tgid;
	char comm[16];
	struct bts_struct *recs;
	u64 nrecs;
	u64 cap;
	bool spooled;
	int spool_fd;
	u32 *epochs;
	u32 nepochs;
};

enum bt_event_kind {
	BT_EV_EXIT = 1,		/* the thread reached its exit stop */
	BT_EV_CRASH,		/* it got a fatal signal */
	BT_EV_DETACH,		/* btrace detached from it */
	BT_EV_END,		/* the program ended: @status */
};

/**
 * struct bt_event - what a report is printed for
 * @kind: an &enum bt_event_kind
 * @thread: the index of the thread in bt_trace.threads
 * @tid: the thread (BT_EV_END: the first process)
 * @pad: 0
 * @nrecs: the thread's records at the time
 * @nepochs: its programs at the time
 * @mapset: the mapset of its last program at the time
 * @signo: BT_EV_CRASH: the signal
 * @code: BT_EV_CRASH: its si_code
 * @addr: BT_EV_CRASH: its si_addr
 * @status: BT_EV_END: the exit code, or 128 + the signal
 * @pad2: 0
 */
struct bt_event {
	u32 kind;
	u32 thread;
	u32 tid;
	u32 pad;
	u64 nrecs;
	u32 nepochs;
	u32 mapset;
	s32 signo;
	s32 code;
	u64 addr;
	s32 status;
	u32 pad2;
};

/**
 * struct bt_trace - everything btrace knows of a run
 * @nbranches: branches a report shows per thread, 0 for all
 * @all: the run recorded every branch (--all)
 * @mapsets: every snapshot of mappings, indexed by their id
 * @nmapsets: number of @mapsets
 * @threads: every thread, in the order they were first seen
 * @nthreads: number of @threads
 * @events: what the report prints, in order
 * @nevents: number of @events
 */
struct bt_trace {
	u32 nbranches;
	bool all;
	struct bt_mapset *mapsets;
	u32 nmapsets;
	struct bt_thread **threads;
	u32 nthreads;
	struct bt_event *events;
	u32 nevents;
};

/* How a report is rendered (view.c). */
struct bt_view {
	bool branches;
	u32 nbranches;
};

/* main.c */
extern const char *bt_prog;
void bt_err(const char *fmt, ...);
void *bt_alloc(size_t size);
void *bt_grow(void *p, size_t size);
char *bt_strdup(const char *s);

/* model.c */
struct bt_thread *bt_thread_add(struct bt_trace *t, u32 tid,
				u32 tgid);
void bt_thread_append(struct bt_thread *th, const struct bts_struct *recs,
		      u64 n);
void bt_thread_epoch(struct bt_thread *th, u32 mapset, bool replace);
u32 bt_mapset_add(struct bt_trace *t, u32 tgid, char *maps,
		  char *buildids);
struct bt_event *bt_event_add(struct bt_trace *t, u32 kind,
			      struct bt_thread *th);
void bt_trace_free(struct bt_trace *t);

/* spool.c */
void bt_recs_reserve(struct bt_thread *th, u64 cap);
void bt_recs_free(struct bt_thread *th);

/* maps.c */
char *bt_maps_read(pid_t tgid);
char *bt_maps_merge(const char *old, const char *cur);
char *bt_maps_buildids(const char *maps);
char *bt_maps_buildid(const char *path);
bool bt_maps_is_vdso(const char *line, size_t len);

/* bts.c */
struct bt_bts_opts {
	u32 records;	/* buffer size, in records */
	bool all;		/* lossless: O_SIGNAL | O_LOSSLESS */
	bool sched;		/* O_SCHED */
	int signal;		/* the overflow signal with @all */
};

int bt_bts_size(struct bt_bts_opts *o, bool user_set);
int bt_bts_config(pid_t tid, const struct bt_bts_opts *o);
void bt_bts_explain(int err, const struct bt_bts_opts *o, pid_t tid);
int bt_bts_exit_code(int err);
long bt_bts_drain(pid_t tid, struct bts_struct *buf, size_t bytes);
int bt_bts_lost(pid_t tid, u64 *lost);

/* emulate.c */
bool bt_emu_enabled(void);
int bt_emu_config(pid_t tid, u32 records);
int bt_emu_resume(pid_t tid, int sig);
bool bt_emu_step(pid_t tid);
long bt_emu_drain(pid_t tid, struct bts_struct *buf, size_t bytes);
void bt_emu_settle(pid_t tid);
void bt_emu_exit(void);

/* trace.c */
struct bt_run {
	struct bt_bts_opts bts;
	struct bt_view view;
	char **argv;
	pid_t attach;
};

int bt_run(struct bt_trace *t, struct bt_run *r);

/* sym.c */
struct bt_sym {
	const char *name;	/* function, or NULL */
	const char *module;	/* file name of the module, or NULL */
	u64 off;		/* from @name, else from the module */
	u64 func;		/* start of the function, 0 if unknown */
	const char *file;	/* source file, or NULL */
	int line;
	u8 kind;		/* an &enum bt_insn of the insn there */
};

enum bt_insn {
	BT_INSN_UNKNOWN,
	BT_INSN_JUMP,
	BT_INSN_CALL,
	BT_INSN_RET,
};

const struct bt_sym *bt_sym_lookup(const struct bt_trace *t, u32 mapset,
				   u64 addr);
void bt_sym_exit(void);

/* view.c */
void bt_view_event(const struct bt_trace *t, const struct bt_event *ev,
		   const struct bt_view *v);

/* file.c */
int bt_file_save(const struct bt_trace *t, const char *path);
int bt_file_load(struct bt_trace *t, const char *path);

#endif /* BTRACE_H */
