/*
 * check.c — what the tick face's checking mode (TESS_TICK_CHECK=1; tick.h,
 * docs/ticks.md "Checking mode") shares between the state classes and the
 * process loop: whether it is on, read once when a state is created, and
 * the note a class leaves of what a failing STEP read, which process.c adds
 * to its one-line error.  The note is per thread: a tick process steps and
 * reports on its own worker thread, and others step concurrently.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tick/tick_internal.h"

static _Thread_local char check_note[160];

int tess__tick_check_on(void)
{
    const char *v = getenv("TESS_TICK_CHECK");
    return v != NULL && strcmp(v, "1") == 0;
}

void tess__tick_check_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(check_note, sizeof check_note, fmt, ap);
    va_end(ap);
}

const char *tess__tick_check_take_note(void)
{
    static _Thread_local char taken[sizeof check_note];
    memcpy(taken, check_note, sizeof taken);
    check_note[0] = '\0';
    return taken;
}
