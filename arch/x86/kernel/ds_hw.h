/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hardware layer of the Debug Store arbiter (arch/x86/kernel/ds.c).
 *
 * Everything ds.c does to the cpu goes through struct ds_hw_ops, so that
 * the KUnit suite (ds_test.c) can replace the hardware by a software model
 * and run the arbiter's logic on any cpu.
 */
#ifndef _X86_KERNEL_DS_HW_H
#define _X86_KERNEL_DS_HW_H

#include <linux/bits.h>
#include <linux/types.h>

#include <asm/ds.h>

struct debug_store;

/* What ds.c asks the hardware of a half to do, see ds_hw_ops.set_ctl. */
#define DS_CTL_ON	BIT(0)	/* store records */
#define DS_CTL_USER	BIT(1)	/* of user mode (CPL > 0) */
#define DS_CTL_KERNEL	BIT(2)	/* of kernel mode (CPL 0) */
#define DS_CTL_INT	BIT(3)	/* interrupt at the threshold */

/* The four fields of a half in the DS area, in their hardware order. */
enum ds_field {
	DS_F_BASE = 0,
	DS_F_INDEX,
	DS_F_MAX,
	DS_F_THRESHOLD,
	DS_NR_FIELDS,
};

/**
 * struct ds_hw_ops - the hardware below the arbiter
 * @supported: whether the cpu has @half; must not touch an MSR
 * @info: record and window size of @half
 * @reserve: borrow @half of every cpu's DS area from perf
 * @unreserve: give @half back to perf
 * @area: the DS area of @cpu, the one the DS_AREA MSR points to
 * @window: the buffer of @half on @cpu that the hardware writes into;
 *	mapped wherever the hardware may write from (user page tables too)
 * @set_ctl: program @half of this cpu with DS_CTL_* bits; 0 stops it
 * @ack: re-arm the overflow interrupt on this cpu after a drain
 */
struct ds_hw_ops {
	bool (*supported)(enum ds_half half);
	int (*info)(enum ds_half half, struct ds_hw_info *info);
	int (*reserve)(enum ds_half half);
	void (*unreserve)(enum ds_half half);
	struct debug_store *(*area)(int cpu);
	void *(*window)(int cpu, enum ds_half half);
	void (*set_ctl)(enum ds_half half, unsigned int ctl);
	void (*ack)(void);
};

/* For the KUnit suite only. */
int ds_set_hw_ops(const struct ds_hw_ops *ops);
void ds_hw_overflow(void);
unsigned int ds_nr_users(enum ds_half half);
u64 *ds_area_fields(struct debug_store *ds, enum ds_half half);

#endif /* _X86_KERNEL_DS_HW_H */
