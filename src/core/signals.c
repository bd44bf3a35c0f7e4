/*
 * signals.c — SIGINT/SIGTERM become a flag that the control function, the
 * barrier and the progress engine poll, so every rank shuts down through the
 * normal path and no partial output is left.  Signal dispositions are
 * process-wide, so this flag is the one piece of process-global state.
 */
#include <signal.h>
#include <string.h>
#include "internal.h"

/* Set by the handler on whatever thread took the signal and read by every
 * thread: an atomic (lock-free on int, so async-signal-safe), which a
 * volatile sig_atomic_t is not across threads (TSan: a race with the tiles
 * controller's poll). */
static int signal_seen;

static void on_signal(int sig)
{
    (void)sig;
    __atomic_store_n(&signal_seen, 1, __ATOMIC_RELAXED);
}

void tess__signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int tess__signal_pending(void) { return __atomic_load_n(&signal_seen, __ATOMIC_RELAXED) != 0; }

int tess_interrupted(const tess_ctx *ctx)
{
    if (tess__signal_pending()) return 1;
    return ctx != NULL && atomic_load(&ctx->interrupted);
}
