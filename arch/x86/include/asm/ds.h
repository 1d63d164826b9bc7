/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Debug Store (DS) arbiter.
 *
 * The DS area of a cpu has two halves: Branch Trace Store (BTS) and
 * Precise Event Based Sampling (PEBS).  arch/x86/kernel/ds.c hands each
 * half to per-task and per-cpu tracers next to perf, which owns the DS
 * area itself.  See Documentation/arch/x86/debug-store.rst.
 */
#ifndef _ASM_X86_DS_H
#define _ASM_X86_DS_H

#include <linux/bits.h>
#include <linux/err.h>
#include <linux/types.h>

struct task_struct;
struct ds_tracer;

/**
 * enum ds_half - the two halves of a DS area
 * @DS_BTS: Branch Trace Store
 * @DS_PEBS: Precise Event Based Sampling
 * @DS_NR_HALVES: the number of halves
 */
enum ds_half {
	DS_BTS = 0,
	DS_PEBS,
	DS_NR_HALVES,
};

/* Request flags, see struct ds_config. */
#define DS_TRACE_USER		BIT(0)	/* records of user mode */
#define DS_TRACE_KERNEL		BIT(1)	/* records of kernel mode */
#define DS_TIMESTAMPS		BIT(2)	/* BTS, per task: switch records */
#define DS_FLAGS_ALL		(DS_TRACE_USER | DS_TRACE_KERNEL | DS_TIMESTAMPS)

/* Alignment of a tracer's buffer, a cache line as the SDM recommends. */
#define DS_BUFFER_ALIGN		64

/* The size of a BTS record in the 64-bit DS format. */
#define DS_BTS_RECORD_SIZE	24

/**
 * struct ds_bts_record - a BTS record in the 64-bit DS format
 * @from: the linear address of the branch instruction, or %DS_BTS_ESCAPE
 * @to: the linear address of the branch target, or an &enum ds_bts_qualifier
 *	for an escape record
 * @flags: branch flags, or the local_clock() time in ns of an escape record
 */
struct ds_bts_record {
	u64 from;
	u64 to;
	u64 flags;
};

/* @from of a record that ds.c wrote, not the hardware. */
#define DS_BTS_ESCAPE		(~0ULL)

/**
 * enum ds_bts_qualifier - the kind of an escape record
 * @DS_BTS_TASK_ARRIVES: the traced task was switched in
 * @DS_BTS_TASK_DEPARTS: the traced task was switched out
 * @DS_BTS_EXEC: the traced task executed a new program
 */
enum ds_bts_qualifier {
	DS_BTS_TASK_ARRIVES = 1,
	DS_BTS_TASK_DEPARTS,
	DS_BTS_EXEC,
};

/* The number of PEBS counter reset values in the DS area. */
#define DS_PEBS_NR_RESET	48

/**
 * struct ds_config - what a tracer asks for
 * @base: the buffer, in kernel memory; aligned to %DS_BUFFER_ALIGN
 * @size: the size of @base in bytes; a non-zero multiple of the record size
 *	(ds_record_size())
 * @overflow: %NULL for a circular buffer; else the buffer is linear and
 *	@overflow is called (from hard interrupt context, through irq_work)
 *	once each time the write index reaches @threshold records before the
 *	end, unless the tracer is reset before the call; records that find
 *	the buffer full are dropped.  It is called with the tracer's lock
 *	held: it must not call the ds_*() functions of the tracer.
 * @data: passed to @overflow
 * @threshold: with @overflow, the number of records before the end of the
 *	buffer at which @overflow is called (0: when the buffer is full);
 *	less than the number of records.  Must be 0 without @overflow.  For
 *	a tracer of user mode on a BTS window of user mode alone, the
 *	hardware is drained early enough for @overflow to come at that
 *	point, not a hardware window later, so the @threshold records are
 *	left for what is traced until the callback has taken effect.
 * @flags: %DS_TRACE_USER and/or %DS_TRACE_KERNEL (at least one), and
 *	%DS_TIMESTAMPS (BTS per-task tracers only)
 */
struct ds_config {
	void *base;
	size_t size;
	void (*overflow)(struct ds_tracer *tracer, void *data);
	void *data;
	size_t threshold;
	unsigned int flags;
};

/**
 * struct ds_hw_info - what the hardware layer offers for one half
 * @record_size: the size of one record in bytes
 * @window_size: the size of the per-cpu buffer the hardware writes into
 * @pebs_enable_mask: PEBS: the bits of MSR_IA32_PEBS_ENABLE a tracer may
 *	set, one per counter that can store PEBS records
 */
struct ds_hw_info {
	size_t record_size;
	size_t window_size;
	u64 pebs_enable_mask;
};

#ifdef CONFIG_X86_DS

struct ds_tracer *ds_request_bts(struct task_struct *task, int cpu,
				 const struct ds_config *cfg);
struct ds_tracer *ds_request_pebs(struct task_struct *task, int cpu,
				  const struct ds_config *cfg);
int ds_release(struct ds_tracer *tracer);
struct ds_tracer *ds_replace(struct ds_tracer *tracer,
			     const struct ds_config *cfg);
int ds_suspend(struct ds_tracer *tracer);
int ds_resume(struct ds_tracer *tracer);
int ds_flush(struct ds_tracer *tracer);
int ds_record_size(enum ds_half half);
int ds_get_index(struct ds_tracer *tracer, size_t *index);
int ds_get_end(struct ds_tracer *tracer, size_t *end);
int ds_get_lost(struct ds_tracer *tracer, u64 *lost);
int ds_access(struct ds_tracer *tracer, size_t index, const void **record);
int ds_write(struct ds_tracer *tracer, const void *record, size_t size);
int ds_reset(struct ds_tracer *tracer);
int ds_clear(struct ds_tracer *tracer);
int ds_get_pebs_reset(struct ds_tracer *tracer, unsigned int counter,
		      u64 *value);
int ds_set_pebs_reset(struct ds_tracer *tracer, unsigned int counter,
		      u64 value);
int ds_set_pebs_enable(struct ds_tracer *tracer, u64 enable);

/* Hooks of the x86 core. */
void ds_switch_to(struct task_struct *prev, struct task_struct *next);
void ds_fork(struct task_struct *child);
void ds_exec(void);
void ds_exit_thread(struct task_struct *task);

/* The other side of perf's claims, see x86_perf_ds_reserve(). */
int ds_perf_get(enum ds_half half);
void ds_perf_put(enum ds_half half);

#else /* !CONFIG_X86_DS */

static inline struct ds_tracer *
ds_request_bts(struct task_struct *task, int cpu, const struct ds_config *cfg)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static inline struct ds_tracer *
ds_request_pebs(struct task_struct *task, int cpu, const struct ds_config *cfg)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static inline int ds_release(struct ds_tracer *tracer) { return -EINVAL; }

static inline struct ds_tracer *
ds_replace(struct ds_tracer *tracer, const struct ds_config *cfg)
{
	return ERR_PTR(-EINVAL);
}

static inline int ds_suspend(struct ds_tracer *tracer) { return -EINVAL; }
static inline int ds_resume(struct ds_tracer *tracer) { return -EINVAL; }
static inline int ds_flush(struct ds_tracer *tracer) { return -EINVAL; }
static inline int ds_record_size(enum ds_half half) { return -EOPNOTSUPP; }

static inline int ds_get_index(struct ds_tracer *tracer, size_t *index)
{
	return -EINVAL;
}

static inline int ds_get_end(struct ds_tracer *tracer, size_t *end)
{
	return -EINVAL;
}

static inline int ds_get_lost(struct ds_tracer *tracer, u64 *lost)
{
	return -EINVAL;
}

static inline int ds_access(struct ds_tracer *tracer, size_t index,
			    const void **record)
{
	return -EINVAL;
}

static inline int ds_write(struct ds_tracer *tracer, const void *record,
			   size_t size)
{
	return -EINVAL;
}

static inline int ds_reset(struct ds_tracer *tracer) { return -EINVAL; }
static inline int ds_clear(struct ds_tracer *tracer) { return -EINVAL; }

static inline int ds_get_pebs_reset(struct ds_tracer *tracer,
				    unsigned int counter, u64 *value)
{
	return -EINVAL;
}

static inline int ds_set_pebs_reset(struct ds_tracer *tracer,
				    unsigned int counter, u64 value)
{
	return -EINVAL;
}

static inline int ds_set_pebs_enable(struct ds_tracer *tracer, u64 enable)
{
	return -EINVAL;
}

static inline void ds_switch_to(struct task_struct *prev,
				struct task_struct *next) { }
static inline void ds_fork(struct task_struct *child) { }
static inline void ds_exec(void) { }
static inline void ds_exit_thread(struct task_struct *task) { }
static inline int ds_perf_get(enum ds_half half) { return 0; }
static inline void ds_perf_put(enum ds_half half) { }

#endif /* CONFIG_X86_DS */

/* Provided by perf (arch/x86/events/intel/ds.c) for the arbiter. */
int x86_perf_ds_info(enum ds_half half, struct ds_hw_info *info);
int x86_perf_ds_reserve(enum ds_half half);
void x86_perf_ds_unreserve(enum ds_half half);
void x86_perf_ds_pebs_basic(void);

#endif /* _ASM_X86_DS_H */
