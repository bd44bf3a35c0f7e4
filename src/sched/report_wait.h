/*
 * report_wait.h — how long the barrier waits for the ranks' done reports
 * before it asks them for their counts (control.c).  The reports come within
 * a message's latency, so the wait only guards against a writer the
 * reasoning in control.c missed; a test that asserts "no asks without a
 * steal" allows them for barriers slower than this (guarantees.c).
 */
#ifndef TESS_SRC_SCHED_REPORT_WAIT_H
#define TESS_SRC_SCHED_REPORT_WAIT_H

#define TESS__REPORT_WAIT_SECONDS 0.05

#endif
