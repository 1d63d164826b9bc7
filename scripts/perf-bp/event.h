/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands in for tools/perf/util/event.h, which pulls in libperf.  Of it
 * the breakpoint tests use only what it includes: the perf_event uapi.
 */
#ifndef PERF_BP_EVENT_H
#define PERF_BP_EVENT_H

#include <linux/types.h>
#include <linux/perf_event.h>

#endif /* PERF_BP_EVENT_H */
