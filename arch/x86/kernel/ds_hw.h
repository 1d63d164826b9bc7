/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hardware below the Debug Store arbiter (arch/x86/kernel/ds.c), as
 * the arbiter and its KUnit suite (ds_test.c) see it.
 *
 * ds.c drives the hardware with direct calls.  A kernel built with the
 * suite can redirect them to the suite's software model of the DS area
 * (struct ds_hw_model, ds_set_model()), so that the arbiter's logic runs
 * on any cpu.
 */
#ifndef _X86_KERNEL_DS_HW_H
#define _X86_KERNEL_DS_HW_H

#include <linux/bits.h>
#include <linux/types.h>

#include <asm/ds.h>

struct debug_store;

/* What ds.c asks the hardware of a half to do, see ds_hw_set_ctl(). */
#define DS_CTL_ON	BIT(0)	/* store records */
#define DS_CTL_USER	BIT(1)	/* of user mode (CPL > 0) */
#define DS_CTL_KERNEL	BIT(2)	/* of kernel mode (CPL 0) */
#define DS_CTL_INT	BIT(3)	/* interrupt at the threshold */

/**
 * struct ds_fields - the four fields of a half in the DS area
 * @base: the buffer's first byte
 * @index: where the hardware stores the next record
 * @max: the byte after the buffer's last record (the absolute maximum)
 * @threshold: the index at which the hardware interrupts
 *
 * In the hardware's order, at bts_buffer_base or pebs_buffer_base of
 * struct debug_store (see ds_area_fields()).
 */
struct ds_fields {
	u64 base;
	u64 index;
	u64 max;
	u64 threshold;
};

/**
 * struct ds_hw_model - a software model of the hardware, for the KUnit suite
 * @supported: whether the cpu has @half; must not touch an MSR
 * @info: record and window size of @half
 * @reserve: borrow @half of every cpu's DS area from perf
 * @unreserve: give @half back to perf
 * @area: the DS area of @cpu, the one the DS_AREA MSR points to
 * @window: the buffer of @half on @cpu that the hardware writes into
 * @set_ctl: program @half of this cpu with DS_CTL_* bits; 0 stops it
 * @set_pebs_enable: write this cpu's MSR_IA32_PEBS_ENABLE
 * @ack: re-arm the overflow interrupt on this cpu after a drain
 *
 * As the hardware, a model stores PEBS records while MSR_IA32_PEBS_ENABLE
 * is not 0, whatever @set_ctl was told.
 */
struct ds_hw_model {
	bool (*supported)(enum ds_half half);
	int (*info)(enum ds_half half, struct ds_hw_info *info);
	int (*reserve)(enum ds_half half);
	void (*unreserve)(enum ds_half half);
	struct debug_store *(*area)(int cpu);
	void *(*window)(int cpu, enum ds_half half);
	void (*set_ctl)(enum ds_half half, unsigned int ctl);
	void (*set_pebs_enable)(u64 enable);
	void (*ack)(void);
};

/* For the KUnit suite only. */
#if IS_ENABLED(CONFIG_X86_DS_KUNIT_TEST)
int ds_set_model(const struct ds_hw_model *model);
unsigned int ds_nr_users(enum ds_half half);
#endif

/* Internals visible to KUnit, see <kunit/visibility.h>. */
#if IS_ENABLED(CONFIG_KUNIT)
struct pt_regs;

void ds_hw_overflow(void);
int ds_nmi_handler(unsigned int cmd, struct pt_regs *regs);
struct ds_fields *ds_area_fields(struct debug_store *ds, enum ds_half half);
#endif

#endif /* _X86_KERNEL_DS_HW_H */
