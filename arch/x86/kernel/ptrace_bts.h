/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Branch trace for debuggers (arch/x86/kernel/ptrace_bts.c): the hooks of
 * the ptrace and task code.
 */
#ifndef _X86_KERNEL_PTRACE_BTS_H
#define _X86_KERNEL_PTRACE_BTS_H

#include <linux/errno.h>
#include <linux/types.h>

struct task_struct;

#ifdef CONFIG_X86_PTRACE_BTS

long ptrace_bts_request(struct task_struct *child, long request,
			unsigned long addr, unsigned long data);
void ptrace_bts_release(struct task_struct *child);
void ptrace_bts_fork(struct task_struct *child);

#else /* !CONFIG_X86_PTRACE_BTS */

/* Without the feature the requests are unknown, like any other. */
static inline long ptrace_bts_request(struct task_struct *child, long request,
				      unsigned long addr, unsigned long data)
{
	return -EIO;
}

static inline void ptrace_bts_release(struct task_struct *child) { }
static inline void ptrace_bts_fork(struct task_struct *child) { }

#endif /* CONFIG_X86_PTRACE_BTS */

#endif /* _X86_KERNEL_PTRACE_BTS_H */
