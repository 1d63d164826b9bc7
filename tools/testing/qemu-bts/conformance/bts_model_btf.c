// SPDX-License-Identifier: GPL-2.0
/*
 * bts_model_btf: DEBUGCTL.BTF is one-shot (Intel SDM Vol. 3, "Single-
 * Stepping on Branches"): "The processor clears the BTF flag when it
 * generates a debug exception."  Linux relies on it: exc_debug_user()
 * drops TIF_BLOCKSTEP without writing DEBUGCTL, and a PTRACE_SINGLESTEP
 * after a PTRACE_SINGLEBLOCK stop then leaves DEBUGCTL alone.  So the
 * single step must stop after one instruction, not at the next branch.
 *
 * Part of the QEMU BTS model's conformance suite; see README there.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest.h"

/*
 * int3 stops the child where the tracer takes over.  One block step
 * stops after the jmp, at btf_l1; one single step then after the first
 * nop, at btf_l2.  With BTF still set it runs on to the next taken
 * branch and stops at btf_l3.
 */
#define BTF_LABEL(x) extern const char x[]
BTF_LABEL(btf_l1);
BTF_LABEL(btf_l2);
BTF_LABEL(btf_l3);
BTF_LABEL(btf_code);

asm(".pushsection .text\n"
	".globl btf_code\n"
	"btf_code:\n"
	"	int3\n"
	"	jmp btf_l1\n"
	"	ud2\n"
	".globl btf_l1\n"
	"btf_l1:\n"
	"	nop\n"
	".globl btf_l2\n"
	"btf_l2:\n"
	"	nop\n"
	"	nop\n"
	"	nop\n"
	"	jmp btf_l3\n"
	"	ud2\n"
	".globl btf_l3\n"
	"btf_l3:\n"
	"	ret\n"
	".popsection\n");

/* Return: true if /proc/cpuinfo lists the bts flag (X86_FEATURE_BTS). */
static bool cpu_has_bts(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (!strncmp(line, "flags", 5) &&
		    (strstr(line, " bts ") || strstr(line, " bts\n")))
			found = true;
	fclose(f);
	return found;
}

static const char *where(unsigned long rip)
{
	if (rip == (unsigned long)btf_l1)
		return "btf_l1 (after the jmp)";
	if (rip == (unsigned long)btf_l2)
		return "btf_l2 (one instruction after btf_l1)";
	if (rip == (unsigned long)btf_l3)
		return "btf_l3 (after the next branch: BTF was still set)";
	return "elsewhere";
}

/* Resume @pid with @req and wait for its SIGTRAP stop; return its rip. */
static long step(pid_t pid, int req, const char *name)
{
	int status;

	if (ptrace(req, pid, NULL, NULL))
		ksft_exit_fail_msg("%s: %s\n", name, strerror(errno));
	if (waitpid(pid, &status, 0) != pid)
		ksft_exit_fail_msg("waitpid: %s\n", strerror(errno));
	if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP)
		return -1;
	return ptrace(PTRACE_PEEKUSER, pid,
		      offsetof(struct user_regs_struct, rip), NULL);
}

/**
 * main() - Block-step to a stop, then single-step one instruction.
 *
 * Return: the kselftest exit status (KSFT_PASS, KSFT_FAIL or KSFT_SKIP).
 */
int main(void)
{
	unsigned long block, single;
	char why[256];
	int status, cpu;
	cpu_set_t cpus;
	pid_t pid;

	ksft_print_header();
	ksft_set_plan(1);
	if (!cpu_has_bts()) {
		ksft_test_result_code(KSFT_SKIP, "btf_one_shot",
				      "the CPU has no BTS (no bts in /proc/cpuinfo)\n");
		ksft_finished();
	}

	/*
	 * One cpu for tracer and tracee: the BTF a faulty CPU leaves set
	 * is in that cpu's DEBUGCTL, and a tracee resumed on another cpu
	 * would single-step right by chance.
	 */
	if (sched_getaffinity(0, sizeof(cpus), &cpus))
		ksft_exit_fail_msg("sched_getaffinity: %s\n", strerror(errno));
	for (cpu = 0; !CPU_ISSET(cpu, &cpus); cpu++)
		;
	CPU_ZERO(&cpus);
	CPU_SET(cpu, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		ksft_exit_fail_msg("sched_setaffinity: %s\n", strerror(errno));

	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (!pid) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		((void (*)(void))btf_code)();
		_exit(0);
	}
	waitpid(pid, &status, 0);			/* SIGSTOP */
	step(pid, PTRACE_CONT, "PTRACE_CONT");		/* the int3 */
	block = step(pid, PTRACE_SINGLEBLOCK, "PTRACE_SINGLEBLOCK");
	single = step(pid, PTRACE_SINGLESTEP, "PTRACE_SINGLESTEP");
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);

	if (block != (unsigned long)btf_l1)
		snprintf(why, sizeof(why),
			 "the block step stopped at %#lx, %s; expected btf_l1",
			 block, where(block));
	else if (single != (unsigned long)btf_l2)
		snprintf(why, sizeof(why),
			 "PTRACE_SINGLESTEP after a PTRACE_SINGLEBLOCK stop stopped at %#lx, %s: the #DB did not clear DEBUGCTL.BTF",
			 single, where(single));
	else
		why[0] = 0;
	if (why[0])
		ksft_test_result_fail("btf_one_shot # %s\n", why);
	else
		ksft_test_result_pass("btf_one_shot\n");
	ksft_finished();
}
