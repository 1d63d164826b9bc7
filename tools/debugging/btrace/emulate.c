// SPDX-License-Identifier: GPL-2.0
/*
 * A test mode for machines without BTS (BTRACE_TEST_STEP=1): the
 * tracees are single-stepped and every taken branch becomes a record in
 * a circular buffer of btrace's own, so that everything but the
 * PTRACE_BTS_* requests themselves runs on any x86-64 Linux.  It is
 * thousands of times slower than BTS: for tests of btrace only.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/ptrace.h>

#include "btrace.h"

struct bt_emu {
	pid_t tid;
	u64 rip;		/* before the step */
	bool syscall;		/* the step runs a system call */
	struct bts_struct *ring;
	u32 size, head, count;
};

static struct bt_emu *bt_emus;
static size_t bt_nemus;

/**
 * bt_emu_enabled() - whether the test mode is on
 *
 * Return: true with BTRACE_TEST_STEP=1 in the environment.
 */
bool bt_emu_enabled(void)
{
	const char *e = getenv("BTRACE_TEST_STEP");

	return e && !strcmp(e, "1");
}

static struct bt_emu *bt_emu_find(pid_t tid)
{
	size_t i;

	for (i = 0; i < bt_nemus; i++)
		if (bt_emus[i].tid == tid)
			return &bt_emus[i];
	return NULL;
}

/**
 * bt_emu_config() - give a thread an emulated circular buffer
 * @tid: the thread
 * @records: its size
 *
 * Return: 0.
 */
int bt_emu_config(pid_t tid, u32 records)
{
	struct bt_emu *e = bt_emu_find(tid);

	if (!e) {
		bt_emus = bt_grow(bt_emus, (bt_nemus + 1) * sizeof(*e));
		e = &bt_emus[bt_nemus++];
	} else {
		free(e->ring);
	}
	memset(e, 0, sizeof(*e));
	e->tid = tid;
	e->size = records;
	e->ring = bt_alloc(records * sizeof(*e->ring));
	return 0;
}

/**
 * bt_emu_resume() - resume a thread for one instruction
 * @tid: the thread
 * @sig: the signal to resume it with
 *
 * Return: 0, or -1 if @tid is not emulated (the caller resumes it).
 */
int bt_emu_resume(pid_t tid, int sig)
{
	struct bt_emu *e = bt_emu_find(tid);
	struct user_regs_struct regs;
	unsigned long word;

	if (!e)
		return -1;
	if (syscall(SYS_ptrace, PTRACE_GETREGS, tid, 0, &regs))
		return -1;
	e->rip = regs.rip;
	errno = 0;
	word = syscall(SYS_ptrace, PTRACE_PEEKTEXT, tid, regs.rip, &word) ?
	       0 : word;
	e->syscall = (word & 0xffff) == 0x050f;
	syscall(SYS_ptrace, PTRACE_SINGLESTEP, tid, 0, sig);
	return 0;
}

static void bt_emu_push(struct bt_emu *e, u64 from, u64 to)
{
	struct bts_struct *r = &e->ring[(e->head + e->count) % e->size];

	memset(r, 0, sizeof(*r));
	r->qualifier = BTS_BRANCH;
	r->from = from;
	r->to = to;
	if (e->count < e->size)
		e->count++;
	else
		e->head = (e->head + 1) % e->size;
}

/**
 * bt_emu_step() - note where a single step took a thread
 * @tid: the thread, in the SIGTRAP stop of its step
 *
 * A step is reported with TRAP_TRACE, or TRAP_BRKPT after a system
 * call; int3 gives SI_KERNEL.  A step that moved the instruction pointer
 * by other than 1 to 15 bytes took a branch (a short jump over a short
 * instruction is missed).
 *
 * Return: true if @tid is emulated and the stop was its step.
 */
bool bt_emu_step(pid_t tid)
{
	struct bt_emu *e = bt_emu_find(tid);
	struct user_regs_struct regs;
	siginfo_t si;

	if (!e || syscall(SYS_ptrace, PTRACE_GETSIGINFO, tid, 0, &si) ||
	    (si.si_code != TRAP_TRACE && si.si_code != TRAP_BRKPT) ||
	    syscall(SYS_ptrace, PTRACE_GETREGS, tid, 0, &regs))
		return false;
	if (e->syscall)
		bt_emu_push(e, e->rip, 0);
	else if (regs.rip - e->rip - 1 >= 15)
		bt_emu_push(e, e->rip, regs.rip);
	return true;
}

/**
 * bt_emu_drain() - PTRACE_BTS_DRAIN of an emulated buffer
 * @tid: the thread
 * @buf: room for the records
 * @bytes: its size
 *
 * Return: the number of records, oldest first, or -ESRCH.
 */
long bt_emu_drain(pid_t tid, struct bts_struct *buf, size_t bytes)
{
	struct bt_emu *e = bt_emu_find(tid);
	u32 i, n;

	if (!e)
		return -ESRCH;
	n = e->count;
	if (n > bytes / sizeof(*buf))
		return -EIO;
	for (i = 0; i < n; i++)
		buf[i] = e->ring[(e->head + i) % e->size];
	e->head = 0;
	e->count = 0;
	return n;
}

/**
 * bt_emu_settle() - take back a step's trap before detaching
 * @tid: the thread, stopped by PTRACE_INTERRUPT
 *
 * The trap of a step that ended while the thread was being interrupted
 * is still queued, and would kill the thread once detached: let it be
 * delivered to us, in a stop that the detach then suppresses.
 */
void bt_emu_settle(pid_t tid)
{
	unsigned long long pending = 0, mask;
	char path[64], line[128];
	int status;
	FILE *f;

	if (!bt_emu_find(tid))
		return;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SigPnd: %llx", &mask) == 1 ||
		    sscanf(line, "ShdPnd: %llx", &mask) == 1)
			pending |= mask;
	fclose(f);
	if (!(pending & (1ULL << (SIGTRAP - 1))))
		return;
	syscall(SYS_ptrace, PTRACE_CONT, tid, 0, 0);
	waitpid(tid, &status, __WALL);
}

/**
 * bt_emu_exit() - free the emulated buffers
 */
void bt_emu_exit(void)
{
	while (bt_nemus)
		free(bt_emus[--bt_nemus].ring);
	free(bt_emus);
	bt_emus = NULL;
}
