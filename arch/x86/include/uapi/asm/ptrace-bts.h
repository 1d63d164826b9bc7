/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Branch trace for debuggers: the PTRACE_BTS_* requests.
 *
 * The request numbers are in <asm/ptrace-abi.h>; the structures and flags
 * are here.  Every structure has one layout for 64-bit, x32 and ia32
 * tracers.  See Documentation/arch/x86/ptrace-bts.rst.
 */
#ifndef _UAPI_ASM_X86_PTRACE_BTS_H
#define _UAPI_ASM_X86_PTRACE_BTS_H

#include <linux/types.h>
#include <asm/ptrace-abi.h>

/* Flags of struct ptrace_bts_config. */
#define PTRACE_BTS_O_TRACE	0x1	/* record the tracee's branches */
#define PTRACE_BTS_O_SCHED	0x2	/* record its context switches */
#define PTRACE_BTS_O_SIGNAL	0x4	/* signal it when the buffer is full */
#define PTRACE_BTS_O_ALLOC	0x8	/* (re)allocate the buffer */
#define PTRACE_BTS_O_LOSSLESS	0x10	/* with O_SIGNAL: stop it before a loss */
#define PTRACE_BTS_O_ALL	(PTRACE_BTS_O_TRACE | PTRACE_BTS_O_SCHED | \
				 PTRACE_BTS_O_SIGNAL | PTRACE_BTS_O_ALLOC | \
				 PTRACE_BTS_O_LOSSLESS)

/*
 * The largest buffer, in bytes of struct bts_struct (32 bytes a record):
 * 524288 records.  The kernel keeps a record in 24 bytes and charges
 * them, in whole pages, against the tracer's RLIMIT_MEMLOCK: 12 MiB for
 * this size, more than the common 8 MiB limit.
 */
#define PTRACE_BTS_SIZE_MAX	(16U << 20)

/* The smallest buffer PTRACE_BTS_O_LOSSLESS takes: 16 records. */
#define PTRACE_BTS_LOSSLESS_MIN_SIZE	512

/* Sizes of struct ptrace_bts_config: the first, and with @lost. */
#define PTRACE_BTS_CONFIG_SIZE_VER0	16
#define PTRACE_BTS_CONFIG_SIZE_VER1	24

/*
 * The overflow signal (PTRACE_BTS_O_SIGNAL) comes with si_code SI_KERNEL
 * and si_errno PTRACE_BTS_SI_ERRNO (ENOBUFS), which no other signal the
 * kernel sends carries.
 */
#define PTRACE_BTS_SI_ERRNO	105

/**
 * struct ptrace_bts_config - PTRACE_BTS_CONFIG and PTRACE_BTS_STATUS
 * @size: with %PTRACE_BTS_O_ALLOC, the capacity of the buffer in BYTES of
 *	struct bts_struct records (a multiple of its size; 0 frees the
 *	buffer); else 0 or the current size.  PTRACE_BTS_SIZE, by
 *	contrast, returns a number of records.
 * @flags: PTRACE_BTS_O_* flags
 * @signal: with %PTRACE_BTS_O_SIGNAL, the signal sent to the tracee when
 *	its buffer is full (or, with %PTRACE_BTS_O_LOSSLESS, about to be);
 *	else 0
 * @bts_size: sizeof(struct bts_struct) (0 is accepted on input)
 * @lost: PTRACE_BTS_STATUS: the records dropped because the linear buffer
 *	was full, since it was last emptied; ignored by PTRACE_BTS_CONFIG.
 *	Only in a structure of %PTRACE_BTS_CONFIG_SIZE_VER1 bytes or more.
 */
struct ptrace_bts_config {
	__u32 size;
	__u32 flags;
	__u32 signal;
	__u32 bts_size;
	__u64 lost;
};

/**
 * enum bts_qualifier - what a struct bts_struct record is
 * @BTS_INVALID: not a record
 * @BTS_BRANCH: a branch from @from to @to
 * @BTS_TASK_ARRIVES: the tracee was switched in at @clock
 * @BTS_TASK_DEPARTS: the tracee was switched out at @clock
 * @BTS_TASK_EXEC: the tracee executed a new program at @clock
 * @BTS_LOST: with %PTRACE_BTS_O_LOSSLESS, the last record of a full
 *	buffer: @clock records were dropped after the one before it
 */
enum bts_qualifier {
	BTS_INVALID = 0,
	BTS_BRANCH,
	BTS_TASK_ARRIVES,
	BTS_TASK_DEPARTS,
	BTS_TASK_EXEC,
	BTS_LOST,
};

/**
 * struct bts_struct - one record of the branch trace
 * @qualifier: an &enum bts_qualifier
 * @pid: BTS_TASK_* and BTS_LOST: the tracee's thread id in the tracer's
 *	pid namespace; else 0
 * @from: BTS_BRANCH: the address of the branch instruction; else 0
 * @to: BTS_BRANCH: the branch target, 0 for a branch into the kernel;
 *	else 0
 * @clock: BTS_TASK_*: the time in nanoseconds (the kernel's local_clock());
 *	BTS_LOST: the number of records dropped; else 0
 */
struct bts_struct {
	__u32 qualifier;
	__u32 pid;
	__u64 from;
	__u64 to;
	__u64 clock;
};

#endif /* _UAPI_ASM_X86_PTRACE_BTS_H */
