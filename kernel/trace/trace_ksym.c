// SPDX-License-Identifier: GPL-2.0
/*
 * ksym tracer: trace the accesses to kernel symbols with hardware breakpoints.
 *
 * Each watch written to ksym_trace_filter becomes one wide breakpoint: a
 * pinned perf breakpoint event on every online CPU.  Every hit of a watch is
 * counted (ksym_profile) and recorded in the ring buffer with the task, the
 * CPU and the instruction that made the access.
 *
 * See Documentation/trace/ksym.rst for the interface.
 */

#define pr_fmt(fmt) "ksym_tracer: " fmt

#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <linux/uaccess.h>
#include <linux/kallsyms.h>
#include <linux/seq_file.h>
#include <linux/security.h>
#include <linux/kprobes.h>
#include <linux/ctype.h>
#include <linux/tracefs.h>
#include <linux/cpuhotplug.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/cpu.h>

#include <asm/sections.h>
#include <asm/insn.h>
#include <asm/insn-eval.h>

#include "trace.h"

/*
 * One watch per debug register at most: a wide breakpoint takes a debug
 * register on every CPU, so more watches could never be installed.
 */
#define KSYM_MAX_WATCHES	HBP_NUM

/* The longest command accepted: symbol, offset, length and access type. */
#define KSYM_CMD_MAX		(KSYM_NAME_LEN + 32)

/*
 * How far past the watched bytes the pointer of a REP string instruction
 * may be when its data breakpoint trap comes; see ksym_string_access().
 */
#define KSYM_STRING_SLACK	PAGE_SIZE

/* The access types of the filter syntax. */
static const struct {
	char	str[4];
	u8	type;
} ksym_access[] = {
	{ "rw-", HW_BREAKPOINT_R | HW_BREAKPOINT_W },
	{ "-w-", HW_BREAKPOINT_W },
	{ "--x", HW_BREAKPOINT_X },
};

/**
 * struct ksym_watch - one watched kernel symbol
 * @bp:		the perf breakpoint event of each CPU (NULL where not
 *		installed: an offline CPU, ksym not current, or a CPU that
 *		came online without a debug register free for it); the slot
 *		is free when @bp itself is NULL
 * @addr:	the watched address (symbol plus @offset)
 * @offset:	the offset into the symbol, as written
 * @hits:	hits since the watch was added or the tracer was selected
 * @type:	HW_BREAKPOINT_W, HW_BREAKPOINT_RW or HW_BREAKPOINT_X
 * @len:	the number of bytes watched (1, 2, 4 or 8; sizeof(long) for X)
 * @name:	the symbol, as written
 */
struct ksym_watch {
	struct perf_event * __percpu	*bp;
	unsigned long			addr;
	unsigned long			offset;
	atomic64_t			hits;
	u8				type;
	u8				len;
	char				name[KSYM_NAME_LEN];
};

/* A parsed ksym_trace_filter command; see ksym_parse(). */
struct ksym_request {
	enum { KSYM_ADD, KSYM_REMOVE, KSYM_CLEAR } op;
	const char	*name;
	unsigned long	offset;
	unsigned long	addr;
	unsigned int	len;
	u8		type;
};

/*
 * ksym_mutex protects the watch table, the breakpoints behind it and
 * ksym_trace:
 *
 *  1. Every change of ksym_watches[] or of a watch's breakpoints, and every
 *     change of ksym_trace, is made with ksym_mutex held.
 *  2. Filter writes and the tracer's init and reset take cpus_read_lock()
 *     before ksym_mutex, so that a watch is installed on exactly the CPUs
 *     that are online; the CPU hotplug callbacks run under the hotplug lock
 *     and take ksym_mutex only.  Hence the order cpu_hotplug_lock, then
 *     ksym_mutex; ksym_mutex is never held when cpus_read_lock() is taken.
 *  3. The fields of a watch other than @hits change only while the watch has
 *     no breakpoint on any CPU.
 *  4. The breakpoint handler runs in #DB context (NMI-like) and takes no
 *     lock: it reaches its watch through the perf event's context pointer,
 *     reads the fields of rule 3 and increments @hits atomically.  Releasing
 *     a perf event removes it from its CPU by IPI, which that CPU serves only
 *     after its handler has returned, so once ksym_uninstall() returns no
 *     handler uses the watch any more and the slot may be reused.
 *  5. Breakpoints are enabled only while ksym_trace is set.  The handler
 *     reads ksym_trace once (READ_ONCE()) and neither counts nor records a
 *     hit when it is NULL: a hit that races with the tracer being selected
 *     or left is dropped, never recorded in another tracer's buffer.
 *  6. The readers of ksym_trace_filter and ksym_profile take ksym_mutex, so
 *     they see whole watches; ksym_profile takes cpus_read_lock() first
 *     (rule 2), so that the online CPUs it compares with are stable.
 */
static DEFINE_MUTEX(ksym_mutex);
static struct ksym_watch ksym_watches[KSYM_MAX_WATCHES];
/*
 * The trace array of the ksym tracer while it is the current tracer, NULL
 * otherwise: only then are watches armed, hits counted and recorded.  The
 * ksym tracer exists in the top-level trace array only, which is never
 * freed, so a handler that read it just before it became NULL still
 * records into live memory.
 */
static struct trace_array *ksym_trace;

static const char *ksym_access_str(u8 type)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(ksym_access); i++) {
		if (ksym_access[i].type == type)
			return ksym_access[i].str;
	}
	return "???";
}

/*
 * Whether a string instruction that moves its pointer @ptr by @size bytes an
 * iteration, in the direction of EFLAGS.DF in @flags, has passed the bytes
 * of @w less than KSYM_STRING_SLACK bytes ago.
 */
static bool ksym_string_passed(const struct ksym_watch *w, unsigned long ptr,
			       unsigned int size, unsigned long flags)
{
	unsigned long first = w->addr, last = w->addr + w->len - 1;

	/* Moving down, the elements above @ptr are done. */
	if (flags & X86_EFLAGS_DF)
		return last >= ptr + size &&
		       first < ptr + size + KSYM_STRING_SLACK;
	/* Moving up, the elements below @ptr are done. */
	return first < ptr && last + KSYM_STRING_SLACK >= ptr;
}

/*
 * A data breakpoint is a trap: it comes after the access, and the ip is
 * normally that of the next instruction.  A REP string instruction is
 * interrupted between two iterations instead (with fast strings, possibly
 * a few iterations after the one that made the access), and the ip is the
 * string instruction itself, which resumes where it stopped.  Tell the
 * two cases apart while the registers are at hand: the string instruction
 * at the trap address made the access if a pointer it uses has already
 * passed the watched bytes.  An access by the instruction before, of
 * bytes just behind where a string instruction that has not started yet
 * will begin, looks the same; the trace then names the string instruction.
 */
static bool ksym_string_access(const struct ksym_watch *w,
			       struct pt_regs *regs)
{
	u8 buf[MAX_INSN_SIZE];
	bool src, dst = true;
	struct insn insn;
	unsigned int size;

	if (copy_from_kernel_nofault(buf, (void *)regs->ip, sizeof(buf)))
		return false;
	if (insn_decode(&insn, buf, sizeof(buf), INSN_MODE_KERN) ||
	    !insn_has_rep_prefix(&insn) || insn.opcode.nbytes != 1 ||
	    insn.addr_bytes != sizeof(long))
		return false;

	/* Which of rSI (source) and rDI (destination) the instruction uses. */
	switch (insn.opcode.bytes[0] & ~1) {
	case 0xa4:	/* MOVS */
	case 0xa6:	/* CMPS */
		src = true;
		break;
	case 0x6c:	/* INS */
	case 0xaa:	/* STOS */
	case 0xae:	/* SCAS */
		src = false;
		break;
	case 0x6e:	/* OUTS */
	case 0xac:	/* LODS */
		src = true;
		dst = false;
		break;
	default:
		return false;
	}
	/* The even opcodes move bytes, the odd ones words of operand size. */
	size = insn.opcode.bytes[0] & 1 ? insn.opnd_bytes : 1;

	return (src && ksym_string_passed(w, regs->si, size, regs->flags)) ||
	       (dst && ksym_string_passed(w, regs->di, size, regs->flags));
}

/*
 * Runs in #DB context on the CPU that made the access, with the debug
 * registers disabled (local_db_save()), so it cannot recurse into itself;
 * see rules 4 and 5 above ksym_mutex.
 */
static void ksym_hbp_handler(struct perf_event *bp,
			     struct perf_sample_data *data,
			     struct pt_regs *regs)
{
	struct ksym_watch *w = bp->overflow_handler_context;
	struct trace_array *tr = READ_ONCE(ksym_trace);
	struct ring_buffer_event *event;
	struct trace_buffer *buffer;
	struct ksym_entry *entry;

	if (!tr)
		return;
	atomic64_inc(&w->hits);

	buffer = tr->array_buffer.buffer;
	event = trace_buffer_lock_reserve(buffer, TRACE_KSYM, sizeof(*entry),
					  tracing_gen_ctx());
	if (!event)
		return;
	entry = ring_buffer_event_data(event);
	entry->addr = w->addr;
	entry->ip = instruction_pointer(regs);
	entry->type = w->type;
	entry->len = w->len;
	entry->string = w->type != HW_BREAKPOINT_X &&
			ksym_string_access(w, regs);
	trace_buffer_unlock_commit_nostack(buffer, event);
}

static void ksym_release_cpu(struct ksym_watch *w, unsigned int cpu)
{
	struct perf_event **bp = per_cpu_ptr(w->bp, cpu);

	lockdep_assert_held(&ksym_mutex);
	unregister_hw_breakpoint(*bp);
	*bp = NULL;
}

/*
 * Create the breakpoint of @w on @cpu disabled: it takes its debug register
 * and passes the checks of the breakpoint layer now, but it fires only once
 * ksym_enable_cpu() enables it.
 */
static int ksym_create_cpu(struct ksym_watch *w, unsigned int cpu)
{
	struct perf_event_attr attr;
	struct perf_event *bp;

	lockdep_assert_held(&ksym_mutex);
	hw_breakpoint_init(&attr);
	attr.bp_addr = w->addr;
	attr.bp_len = w->len;
	attr.bp_type = w->type;
	attr.disabled = 1;

	bp = perf_event_create_kernel_counter(&attr, cpu, NULL,
					      ksym_hbp_handler, w);
	if (IS_ERR(bp))
		return PTR_ERR(bp);
	*per_cpu_ptr(w->bp, cpu) = bp;
	return 0;
}

static void ksym_enable_cpu(struct ksym_watch *w, unsigned int cpu)
{
	lockdep_assert_held(&ksym_mutex);
	perf_event_enable(*per_cpu_ptr(w->bp, cpu));
}

/* Remove the breakpoints of @w from every CPU; @w stays in the table. */
static void ksym_uninstall(struct ksym_watch *w)
{
	unsigned int cpu;

	lockdep_assert_held(&ksym_mutex);
	for_each_possible_cpu(cpu)
		ksym_release_cpu(w, cpu);
}

/*
 * Give @w a disabled breakpoint on every online CPU, or on none: this
 * reserves its debug registers and checks it against the breakpoint layer
 * without arming anything.
 */
static int ksym_reserve(struct ksym_watch *w)
{
	unsigned int cpu;
	int err;

	lockdep_assert_cpus_held();
	lockdep_assert_held(&ksym_mutex);

	for_each_online_cpu(cpu) {
		err = ksym_create_cpu(w, cpu);
		if (err)
			goto release;
	}
	return 0;

release:
	ksym_uninstall(w);
	return err;
}

/* Arm the breakpoints ksym_reserve() gave @w. */
static void ksym_enable(struct ksym_watch *w)
{
	unsigned int cpu;

	lockdep_assert_cpus_held();
	lockdep_assert_held(&ksym_mutex);

	for_each_online_cpu(cpu)
		ksym_enable_cpu(w, cpu);
}

static void ksym_free_watch(struct ksym_watch *w)
{
	lockdep_assert_held(&ksym_mutex);
	ksym_uninstall(w);
	free_percpu(w->bp);
	w->bp = NULL;
}

static struct ksym_watch *ksym_find(unsigned long addr)
{
	int i;

	lockdep_assert_held(&ksym_mutex);
	for (i = 0; i < KSYM_MAX_WATCHES; i++) {
		if (ksym_watches[i].bp && ksym_watches[i].addr == addr)
			return &ksym_watches[i];
	}
	return NULL;
}

static int ksym_add(const struct ksym_request *req)
{
	struct ksym_watch *w = NULL;
	int i, err;

	lockdep_assert_held(&ksym_mutex);
	if (ksym_find(req->addr))
		return -EEXIST;
	for (i = 0; i < KSYM_MAX_WATCHES && !w; i++) {
		if (!ksym_watches[i].bp)
			w = &ksym_watches[i];
	}
	if (!w)
		return -ENOSPC;

	w->bp = alloc_percpu(struct perf_event *);
	if (!w->bp)
		return -ENOMEM;
	strscpy(w->name, req->name, sizeof(w->name));
	w->offset = req->offset;
	w->addr = req->addr;
	w->type = req->type;
	w->len = req->len;
	atomic64_set(&w->hits, 0);

	/*
	 * Reserve the breakpoints also when the tracer is not current, and
	 * release them again unarmed: what the breakpoint layer refuses (a
	 * full CPU, the data of the entry code) is refused now, not when the
	 * tracer is selected, and nothing fires for another tracer.
	 */
	err = ksym_reserve(w);
	if (err) {
		ksym_free_watch(w);
		return err;
	}
	if (ksym_trace)
		ksym_enable(w);
	else
		ksym_uninstall(w);
	return 0;
}

static int ksym_remove(const struct ksym_request *req)
{
	struct ksym_watch *w;

	lockdep_assert_held(&ksym_mutex);
	w = ksym_find(req->addr);
	if (!w || (req->len && req->len != w->len))
		return -ENOENT;
	ksym_free_watch(w);
	return 0;
}

static void ksym_clear(void)
{
	int i;

	lockdep_assert_held(&ksym_mutex);
	for (i = 0; i < KSYM_MAX_WATCHES; i++) {
		if (ksym_watches[i].bp)
			ksym_free_watch(&ksym_watches[i]);
	}
}

/*
 * Code the hardware must not watch for execution: the entry code and the
 * noinstr code run before the #DB handler has disabled the breakpoints (a
 * breakpoint there would recurse), and what kprobes refuses to probe.
 * Without kprobes there is no such list, and no execute watch at all.
 */
static int ksym_check_text(unsigned long addr)
{
	if (!IS_ENABLED(CONFIG_KPROBES))
		return -EOPNOTSUPP;
	if (!core_kernel_text(addr) || is_kernel_inittext(addr))
		return -EINVAL;
	if ((addr >= (unsigned long)__entry_text_start &&
	     addr < (unsigned long)__entry_text_end) ||
	    (addr >= (unsigned long)__noinstr_text_start &&
	     addr < (unsigned long)__noinstr_text_end))
		return -EINVAL;
	if (within_kprobe_blacklist(addr))
		return -EINVAL;
	return 0;
}

/*
 * Data the tracer may watch: the core kernel's .data, .bss and .rodata.
 * That leaves out per-cpu symbols (kallsyms gives their offset in the
 * per-cpu area, not an address), module data (it can go away under the
 * watch), the freed init sections and text.  The breakpoint layer refuses
 * the data of the entry path on top of that (cpu_entry_area, the GDT,
 * __per_cpu_offset, ...: within_cpu_entry() in
 * arch/x86/kernel/hw_breakpoint.c).
 */
static int ksym_check_data(unsigned long addr, unsigned int len)
{
	unsigned long last = addr + len - 1;

	if (is_kernel_core_data(addr) && is_kernel_core_data(last))
		return 0;
	if (is_kernel_rodata(addr) && is_kernel_rodata(last))
		return 0;
	return -EINVAL;
}

/*
 * The length of a data watch written without one: 4 bytes, the size of an
 * int and the fixed length of the 2.6.32 ksym tracer, or less where 4 bytes
 * are misaligned or do not fit in @room.  kallsyms knows no object sizes,
 * only the distance to the next symbol, which includes padding (and KASAN's
 * redzones), so a longer default could watch bytes of something else.
 */
static unsigned int ksym_default_len(unsigned long addr, unsigned long room)
{
	unsigned int len = HW_BREAKPOINT_LEN_4;

	while (len > 1 && (len > room || !IS_ALIGNED(addr, len)))
		len /= 2;
	return len;
}

/*
 * Find the address of @req's symbol and check that it may be watched;
 * fills in ->addr and, for an add without a length, ->len.
 */
static int ksym_resolve(struct ksym_request *req)
{
	unsigned long sym, size, off;

	sym = kallsyms_lookup_name(req->name);
	if (!sym)
		return -ENOENT;
	/* A symbol of no known size lies outside the kernel image. */
	if (!kallsyms_lookup_size_offset(sym, &size, &off) || off)
		return -EINVAL;
	if (req->offset >= size)
		return -EINVAL;
	req->addr = sym + req->offset;

	if (req->op == KSYM_REMOVE)
		return 0;
	if (req->type == HW_BREAKPOINT_X) {
		/* The length of an x86 execute breakpoint is sizeof(long). */
		if (req->len)
			return -EINVAL;
		req->len = sizeof(long);
		return ksym_check_text(req->addr);
	}
	if (!req->len)
		req->len = ksym_default_len(req->addr, size - req->offset);
	if (!IS_ALIGNED(req->addr, req->len) ||
	    req->len > size - req->offset)
		return -EINVAL;
	return ksym_check_data(req->addr, req->len);
}

/*
 * Parse one command, "<symbol>[+<offset>][/<len>]:<access>", "" or "0";
 * @cmd is modified.  Only the syntax is checked here.
 */
static int ksym_parse(char *cmd, struct ksym_request *req)
{
	char *access, *slash, *plus;
	unsigned int i;
	int err;

	memset(req, 0, sizeof(*req));
	if (!*cmd || !strcmp(cmd, "0")) {
		req->op = KSYM_CLEAR;
		return 0;
	}

	/* One command a write: no blanks, no second line. */
	for (i = 0; cmd[i]; i++) {
		if (isspace(cmd[i]))
			return -EINVAL;
	}

	access = strrchr(cmd, ':');
	if (!access)
		return -EINVAL;
	*access++ = '\0';
	/* Well formed, but x86 has no read-only data breakpoint. */
	if (!strcmp(access, "r--"))
		return -EOPNOTSUPP;
	req->op = KSYM_REMOVE;
	if (strcmp(access, "---")) {
		req->op = KSYM_ADD;
		for (i = 0; i < ARRAY_SIZE(ksym_access); i++) {
			if (!strcmp(access, ksym_access[i].str))
				req->type = ksym_access[i].type;
		}
		if (!req->type)
			return -EINVAL;
	}

	slash = strchr(cmd, '/');
	if (slash) {
		*slash++ = '\0';
		err = kstrtouint(slash, 0, &req->len);
		if (err)
			return -EINVAL;
		if (req->len != HW_BREAKPOINT_LEN_1 &&
		    req->len != HW_BREAKPOINT_LEN_2 &&
		    req->len != HW_BREAKPOINT_LEN_4 &&
		    req->len != HW_BREAKPOINT_LEN_8)
			return -EINVAL;
	}

	plus = strchr(cmd, '+');
	if (plus) {
		*plus++ = '\0';
		err = kstrtoul(plus, 0, &req->offset);
		if (err)
			return -EINVAL;
	}

	if (!*cmd || strlen(cmd) >= KSYM_NAME_LEN)
		return -EINVAL;
	req->name = cmd;
	return 0;
}

static int ksym_command(char *cmd)
{
	struct ksym_request req;
	int err;

	err = ksym_parse(cmd, &req);
	if (err)
		return err;
	if (req.op != KSYM_CLEAR) {
		err = ksym_resolve(&req);
		if (err)
			return err;
	}

	cpus_read_lock();
	mutex_lock(&ksym_mutex);
	switch (req.op) {
	case KSYM_ADD:
		err = ksym_add(&req);
		break;
	case KSYM_REMOVE:
		err = ksym_remove(&req);
		break;
	case KSYM_CLEAR:
		ksym_clear();
		break;
	}
	mutex_unlock(&ksym_mutex);
	cpus_read_unlock();
	return err;
}

static ssize_t ksym_filter_write(struct file *file, const char __user *ubuf,
				 size_t cnt, loff_t *ppos)
{
	char *buf;
	int err;

	if (cnt > KSYM_CMD_MAX)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, cnt);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	err = ksym_command(strim(buf));
	kfree(buf);
	if (err)
		return err;
	*ppos += cnt;
	return cnt;
}

/* Print @w in the syntax of ksym_trace_filter, without a newline. */
static void ksym_show_watch(struct seq_file *m, const struct ksym_watch *w)
{
	seq_puts(m, w->name);
	if (w->offset)
		seq_printf(m, "+0x%lx", w->offset);
	if (w->type != HW_BREAKPOINT_X)
		seq_printf(m, "/%u", w->len);
	seq_printf(m, ":%s", ksym_access_str(w->type));
}

static int ksym_filter_show(struct seq_file *m, void *v)
{
	int i;

	mutex_lock(&ksym_mutex);
	for (i = 0; i < KSYM_MAX_WATCHES; i++) {
		if (!ksym_watches[i].bp)
			continue;
		ksym_show_watch(m, &ksym_watches[i]);
		seq_putc(m, '\n');
	}
	mutex_unlock(&ksym_mutex);
	return 0;
}

static int ksym_filter_open(struct inode *inode, struct file *file)
{
	int ret;

	ret = security_locked_down(LOCKDOWN_TRACEFS);
	if (ret)
		return ret;
	/* A truncating open (">" in a shell) changes nothing by itself. */
	if (!(file->f_mode & FMODE_READ))
		return 0;
	return single_open(file, ksym_filter_show, NULL);
}

static int ksym_filter_release(struct inode *inode, struct file *file)
{
	if (!(file->f_mode & FMODE_READ))
		return 0;
	return single_release(inode, file);
}

static const struct file_operations ksym_filter_fops = {
	.open		= ksym_filter_open,
	.read		= seq_read,
	.write		= ksym_filter_write,
	/* Not seq_lseek(): a write-only open has no seq_file. */
	.llseek		= tracing_lseek,
	.release	= ksym_filter_release,
};

/*
 * Print " missing=CPU,CPU..." for the online CPUs on which @w has no
 * breakpoint while it is armed: CPUs that came online with every debug
 * register taken (see ksym_cpu_online()).
 */
static void ksym_show_missing(struct seq_file *m, const struct ksym_watch *w)
{
	const char *sep = " missing=";
	unsigned int cpu;

	lockdep_assert_cpus_held();
	lockdep_assert_held(&ksym_mutex);
	if (!ksym_trace)
		return;
	for_each_online_cpu(cpu) {
		if (*per_cpu_ptr(w->bp, cpu))
			continue;
		seq_printf(m, "%s%u", sep, cpu);
		sep = ",";
	}
}

static int ksym_profile_show(struct seq_file *m, void *v)
{
	int i;

	seq_puts(m, "# watch hits [missing=CPUS]\n");
	cpus_read_lock();
	mutex_lock(&ksym_mutex);
	for (i = 0; i < KSYM_MAX_WATCHES; i++) {
		if (!ksym_watches[i].bp)
			continue;
		ksym_show_watch(m, &ksym_watches[i]);
		seq_printf(m, " %lld", atomic64_read(&ksym_watches[i].hits));
		ksym_show_missing(m, &ksym_watches[i]);
		seq_putc(m, '\n');
	}
	mutex_unlock(&ksym_mutex);
	cpus_read_unlock();
	return 0;
}

static int ksym_profile_open(struct inode *inode, struct file *file)
{
	int ret;

	ret = security_locked_down(LOCKDOWN_TRACEFS);
	if (ret)
		return ret;
	return single_open(file, ksym_profile_show, NULL);
}

static const struct file_operations ksym_profile_fops = {
	.open		= ksym_profile_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= single_release,
};

/*
 * x86 data breakpoints are traps: the exception comes after the access,
 * with the ip of the next instruction (but see ksym_string_access()).  Find
 * the instruction that made the access by decoding the function from its
 * start up to that ip.  Returns 0 when the instruction cannot be found: no
 * symbol, unreadable or undecodable text, or an ip that is no instruction
 * boundary (the text changed, or a kprobe's int3 hides the length of an
 * instruction).
 */
static unsigned long ksym_access_ip(unsigned long ip)
{
	unsigned long size, offset, addr, prev = 0;
	u8 buf[MAX_INSN_SIZE];
	struct insn insn;

	if (!kallsyms_lookup_size_offset(ip, &size, &offset) || !offset)
		return 0;

	for (addr = ip - offset; addr < ip; addr += insn.length) {
		if (copy_from_kernel_nofault(buf, (void *)addr, sizeof(buf)))
			return 0;
		if (insn_decode(&insn, buf, sizeof(buf), INSN_MODE_KERN))
			return 0;
		prev = addr;
	}
	return addr == ip ? prev : 0;
}

static enum print_line_t ksym_trace_print(struct trace_iterator *iter,
					  int flags, struct trace_event *event)
{
	struct trace_seq *s = &iter->seq;
	unsigned long size, off, ip;
	struct ksym_entry *field;

	trace_assign_type(field, iter->ent);

	trace_seq_printf(s, "%ps", (void *)field->addr);
	if (kallsyms_lookup_size_offset(field->addr, &size, &off) && off)
		trace_seq_printf(s, "+0x%lx", off);
	trace_seq_printf(s, " %s ", ksym_access_str(field->type));

	/*
	 * An execute breakpoint is a fault, and a string instruction that the
	 * trap interrupted resumes: ip is the instruction itself.
	 */
	if (field->type == HW_BREAKPOINT_X || field->string)
		ip = field->ip;
	else
		ip = ksym_access_ip(field->ip);
	if (ip)
		trace_seq_printf(s, "ip=%pS\n", (void *)ip);
	else
		trace_seq_printf(s, "after=%pS\n", (void *)field->ip);

	return trace_handle_return(s);
}

static enum print_line_t ksym_trace_raw(struct trace_iterator *iter,
					int flags, struct trace_event *event)
{
	struct trace_seq *s = &iter->seq;
	struct ksym_entry *field;

	trace_assign_type(field, iter->ent);
	trace_seq_printf(s, "0x%lx %u %u 0x%lx\n", field->addr,
			 field->type, field->len, field->ip);
	return trace_handle_return(s);
}

static struct trace_event_functions ksym_trace_funcs = {
	.trace		= ksym_trace_print,
	.raw		= ksym_trace_raw,
};

static struct trace_event ksym_trace_event = {
	.type		= TRACE_KSYM,
	.funcs		= &ksym_trace_funcs,
};

static void ksym_print_header(struct seq_file *m)
{
	trace_default_header(m);
	seq_puts(m, "# ksym: SYMBOL[+OFFSET] ACCESS ip=INSTRUCTION-THAT-ACCESSED\n"
		    "#\n");
}

static int ksym_tracer_init(struct trace_array *tr)
{
	int i, err = 0;

	cpus_read_lock();
	mutex_lock(&ksym_mutex);
	for (i = 0; i < KSYM_MAX_WATCHES; i++) {
		if (!ksym_watches[i].bp)
			continue;
		atomic64_set(&ksym_watches[i].hits, 0);
		err = ksym_reserve(&ksym_watches[i]);
		if (err)
			break;
	}
	if (err) {
		/* Every watch or none: release the ones reserved. */
		while (i--) {
			if (ksym_watches[i].bp)
				ksym_uninstall(&ksym_watches[i]);
		}
	} else {
		/* Rule 5: publish the trace array before arming anything. */
		WRITE_ONCE(ksym_trace, tr);
		for (i = 0; i < KSYM_MAX_WATCHES; i++) {
			if (ksym_watches[i].bp)
				ksym_enable(&ksym_watches[i]);
		}
	}
	mutex_unlock(&ksym_mutex);
	cpus_read_unlock();

	if (err)
		return err;
	/* Record the comm of the tasks that hit, for the trace output. */
	tracing_start_cmdline_record();
	return 0;
}

static void ksym_tracer_reset(struct trace_array *tr)
{
	int i;

	tracing_stop_cmdline_record();

	cpus_read_lock();
	mutex_lock(&ksym_mutex);
	/* Rule 5: a hit from now on is neither counted nor recorded. */
	WRITE_ONCE(ksym_trace, NULL);
	for (i = 0; i < KSYM_MAX_WATCHES; i++) {
		if (ksym_watches[i].bp)
			ksym_uninstall(&ksym_watches[i]);
	}
	mutex_unlock(&ksym_mutex);
	cpus_read_unlock();
}

static struct tracer ksym_tracer __read_mostly = {
	.name		= "ksym",
	.init		= ksym_tracer_init,
	.reset		= ksym_tracer_reset,
	.print_header	= ksym_print_header,
};

/*
 * A CPU coming online gets the breakpoint of every watch, before tasks can
 * run on it (CPUHP_AP_ONLINE_DYN precedes CPUHP_AP_ACTIVE).  A tracer must
 * not keep a CPU offline, and any task can take the debug registers of an
 * offline CPU with breakpoints bound to it: a watch that does not fit is
 * left out on this CPU, which ksym_profile and the kernel log say, until
 * the CPU comes online again or the tracer is selected again.
 */
static int ksym_cpu_online(unsigned int cpu)
{
	struct ksym_watch *w;
	int i, err;

	mutex_lock(&ksym_mutex);
	if (!ksym_trace)
		goto unlock;
	for (i = 0; i < KSYM_MAX_WATCHES; i++) {
		w = &ksym_watches[i];
		if (!w->bp)
			continue;
		err = ksym_create_cpu(w, cpu);
		if (err) {
			pr_warn("%s+0x%lx is not installed on CPU %u (%d): its accesses there are missed\n",
				w->name, w->offset, cpu, err);
			continue;
		}
		ksym_enable_cpu(w, cpu);
	}
unlock:
	mutex_unlock(&ksym_mutex);
	return 0;
}

/* Perf forgets the events of a CPU going offline: give the registers back. */
static int ksym_cpu_offline(unsigned int cpu)
{
	int i;

	mutex_lock(&ksym_mutex);
	for (i = 0; i < KSYM_MAX_WATCHES; i++) {
		if (ksym_watches[i].bp)
			ksym_release_cpu(&ksym_watches[i], cpu);
	}
	mutex_unlock(&ksym_mutex);
	return 0;
}

static __init int init_ksym_tracer(void)
{
	int state, ret;

	if (!register_trace_event(&ksym_trace_event)) {
		pr_warn("cannot register the trace event\n");
		return -ENODEV;
	}

	state = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN,
					  "trace/ksym:online",
					  ksym_cpu_online, ksym_cpu_offline);
	if (state < 0) {
		ret = state;
		goto unregister_event;
	}

	ret = register_tracer(&ksym_tracer);
	if (ret)
		goto remove_state;

	if (tracing_init_dentry())
		return 0;
	trace_create_file("ksym_trace_filter", TRACE_MODE_WRITE, NULL, NULL,
			  &ksym_filter_fops);
	trace_create_file("ksym_profile", TRACE_MODE_READ, NULL, NULL,
			  &ksym_profile_fops);
	return 0;

remove_state:
	cpuhp_remove_state_nocalls(state);
unregister_event:
	unregister_trace_event(&ksym_trace_event);
	return ret;
}
late_initcall(init_ksym_tracer);
