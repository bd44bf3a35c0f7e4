/*
 * signals.c — SIGINT/SIGTERM become a flag that the control function, the
 * barrier and the progress engine poll, so every rank shuts down through the
 * normal path and no partial output is left.  Signal dispositions are
 * process-wide, so this flag is the one piece of process-global state.
 *
 * The signals are blocked in the thread that calls tess_init before any
 * thread starts (MPI's, the workers', the progress engine's), so every
 * thread inherits the block, and one waiter thread takes them with sigwait.
 * A library that installs its own handler while it runs cannot steal them
 * that way: METIS (GKlib) traps SIGTERM and longjmps out of the partitioner,
 * which turned a Ctrl-C during partitioning into "METIS failed" — and would
 * jump onto the wrong stack had another thread taken the signal.  The flag
 * handler stays installed for threads that unblock the signals.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "internal.h"

/* lock-free, so the handler may set it; atomic, as the waiter thread does too */
static atomic_int signal_seen;

static pthread_mutex_t waiter_mu = PTHREAD_MUTEX_INITIALIZER;
static int waiter_users; /* contexts that share the waiter */
static pthread_t waiter;
static int waiter_running;
static sigset_t caller_mask; /* the initialising thread's mask before the block */

static void on_signal(int sig)
{
    (void)sig;
    atomic_store(&signal_seen, 1);
}

static void stop_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
}

/* Under mpirun the first signal is said at once, from this thread (no
 * handler restrictions): mpirun follows its SIGTERM with SIGKILL a second
 * later, which a rank still writing its output would not survive to report. */
static void say_stopping(int rank, int sig)
{
    if (rank < 0 || atomic_load(&signal_seen)) return;
    fprintf(stderr, "tessera[rank %d]: %s received: stopping\n", rank,
            sig == SIGINT ? "SIGINT" : "SIGTERM");
}

static void *wait_for_signals(void *arg)
{
    int rank = (int)(intptr_t)arg; /* -1 when embedded */
    sigset_t set;
    stop_signals(&set);
    for (;;) { /* sigwait is a cancellation point: tess__signals_release ends it */
        int sig = 0;
        if (sigwait(&set, &sig) != 0) continue;
        say_stopping(rank, sig);
        atomic_store(&signal_seen, 1);
    }
    return NULL;
}

int tess__signals_block(void)
{
    sigset_t set;
    stop_signals(&set);
    pthread_mutex_lock(&waiter_mu);
    int rc = 0;
    if (waiter_users == 0) rc = pthread_sigmask(SIG_BLOCK, &set, &caller_mask);
    if (rc == 0) waiter_users++;
    pthread_mutex_unlock(&waiter_mu);
    return rc == 0 ? TESS_OK : TESS_ERR_INVAL;
}

void tess__signals_install(int rank, int nranks)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    pthread_mutex_lock(&waiter_mu);
    if (!waiter_running && waiter_users > 0)
        waiter_running = pthread_create(&waiter, NULL, wait_for_signals,
                                        (void *)(intptr_t)(nranks > 1 ? rank : -1)) == 0;
    pthread_mutex_unlock(&waiter_mu);
}

void tess__signals_release(void)
{
    pthread_mutex_lock(&waiter_mu);
    if (waiter_users > 0 && --waiter_users == 0) {
        if (waiter_running) {
            pthread_cancel(waiter);
            pthread_join(waiter, NULL);
            waiter_running = 0;
        }
        pthread_sigmask(SIG_SETMASK, &caller_mask, NULL); /* a pending signal lands on the flag */
    }
    pthread_mutex_unlock(&waiter_mu);
}

int tess__signal_pending(void) { return atomic_load(&signal_seen) != 0; }

int tess_interrupted(const tess_ctx *ctx)
{
    if (tess__signal_pending()) return 1;
    return ctx != NULL && atomic_load(&ctx->interrupted);
}
