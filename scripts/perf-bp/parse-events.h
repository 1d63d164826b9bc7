/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands in for tools/perf/util/parse-events.h: of the event parser the
 * breakpoint tests use only the default length of an execute breakpoint.
 */
#ifndef PERF_BP_PARSE_EVENTS_H
#define PERF_BP_PARSE_EVENTS_H

#include <stddef.h>

size_t default_breakpoint_len(void);

#endif /* PERF_BP_PARSE_EVENTS_H */
