/*
 * vclock.c — the virtual clock of `--clock virtual`: the tick processes of
 * one rank run as a conservative discrete-event simulation over the real
 * scheduling code (docs/ticks.md, "Virtual clock").
 *
 * Each process has its own clock in µs.  Modelled compute (--step-cost)
 * moves it forward; a wait moves it to the time the next message is due or
 * the wait times out.  Messages carry their delivery time on the sender's
 * clock plus the latency model's delay, as in real time.
 *
 * The rule that keeps it exact: a process acts at time t only when no other
 * process can still send it a message due before t.  Every process
 * publishes `next`, the earliest time it may act again — its clock while it
 * runs (it may send now), the time it wakes while it waits, lowered by any
 * message sent to it.  Anything a process sends is due at or after its
 * `next`, so a process whose `next` is the smallest of all (ties included)
 * has every message due up to then in its mailbox.  Only those run; the
 * others sleep on their own condition variable until they are the
 * smallest.  There is always a smallest, so the simulation cannot deadlock;
 * processes tied at the same time run in parallel, at most as many at once
 * as there are cores (wake_runnable).
 *
 * Every operation scans the n clocks under one mutex: O(n) per event,
 * which is small next to a STEP for the up to a few thousand processes one
 * machine can host.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include "tick/tick_internal.h"

typedef struct vproc {
    double next;    /* earliest time this process may act again */
    double now;     /* its clock when it started waiting */
    double pending; /* smallest delivery time sent to it while it ran */
    int waiting;    /* blocked in wait_turn */
    int signalled;  /* woken and not yet running: no second futex wake-up */
    pthread_cond_t cv;
} vproc;

struct tick_vclock {
    pthread_mutex_t mu;
    int n;
    vproc *p;
    int running;  /* processes outside wait_turn (not yet left) */
    int inflight; /* signalled, not yet resumed */
    int cap;      /* running + inflight kept at most this (the cores) */
};

tick_vclock *tess__tick_vclock_new(int n)
{
    tick_vclock *vc = calloc(1, sizeof *vc);
    if (vc == NULL) return NULL;
    vc->p = calloc((size_t)n, sizeof *vc->p);
    if (vc->p == NULL) {
        free(vc);
        return NULL;
    }
    vc->n = n;
    vc->running = n;
    int cores = tess__usable_cores();
    vc->cap = cores > 2 ? cores : 2;
    /* Short critical sections that every process enters several times a
     * tick: spin a little before sleeping in the kernel. */
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(&vc->mu, &attr);
    pthread_mutexattr_destroy(&attr);
    for (int i = 0; i < n; i++) {
        vc->p[i].pending = INFINITY;
        pthread_cond_init(&vc->p[i].cv, NULL);
    }
    return vc;
}

void tess__tick_vclock_free(tick_vclock *vc)
{
    if (vc == NULL) return;
    for (int i = 0; i < vc->n; i++) pthread_cond_destroy(&vc->p[i].cv);
    pthread_mutex_destroy(&vc->mu);
    free(vc->p);
    free(vc);
}

static double smallest_next(const tick_vclock *vc)
{
    double lo = INFINITY;
    for (int i = 0; i < vc->n; i++)
        if (vc->p[i].next < lo) lo = vc->p[i].next;
    return lo;
}

/*
 * Wake waiting processes that are now among the smallest (mutex held), each
 * once, and no more than keep the cores busy: with hundreds of processes
 * tied at one time, waking them all at once (and again on every change) had
 * them fight over the mutex, most of a run's time in futex calls.  The
 * others are woken as running ones wait again or leave.
 */
static void wake_runnable(tick_vclock *vc)
{
    double lo = smallest_next(vc);
    for (int i = 0; i < vc->n && vc->running + vc->inflight < vc->cap; i++) {
        vproc *x = &vc->p[i];
        if (x->waiting && !x->signalled && x->next <= lo) {
            x->signalled = 1;
            vc->inflight++;
            pthread_cond_signal(&x->cv);
        }
    }
}

/* Block until process me is among the smallest (mutex held). */
static void wait_turn(tick_vclock *vc, int me)
{
    vproc *x = &vc->p[me];
    x->waiting = 1;
    vc->running--;
    for (;;) {
        if (x->signalled) { /* woken (or about to be): it is no longer in flight */
            x->signalled = 0;
            vc->inflight--;
        }
        if (x->next <= smallest_next(vc)) break;
        wake_runnable(vc);
        pthread_cond_wait(&x->cv, &vc->mu);
    }
    x->waiting = 0;
    vc->running++;
}

void tess__tick_vclock_advance(tick_vclock *vc, int me, double t)
{
    pthread_mutex_lock(&vc->mu);
    vproc *x = &vc->p[me];
    x->next = t;
    x->now = t;
    wait_turn(vc, me);
    pthread_mutex_unlock(&vc->mu);
}

double tess__tick_vclock_wait(tick_vclock *vc, int me, double now, double until)
{
    pthread_mutex_lock(&vc->mu);
    vproc *x = &vc->p[me];
    /* A message announced before the mailbox was last drained may already be
     * held (then `until` is at most its time) or even handled (then waking
     * at `now` costs one more look at the mailbox): both harmless. */
    double t = x->pending < until ? x->pending : until;
    x->next = t > now ? t : now;
    x->now = now;
    x->pending = INFINITY;
    wait_turn(vc, me);
    double woke = x->next;
    pthread_mutex_unlock(&vc->mu);
    return woke;
}

void tess__tick_vclock_sent(tick_vclock *vc, int dst, double deliver_at)
{
    pthread_mutex_lock(&vc->mu);
    vproc *x = &vc->p[dst];
    if (!x->waiting) { /* running: its next wait starts no later than this */
        if (deliver_at < x->pending) x->pending = deliver_at;
    } else if (deliver_at < x->next) { /* waiting: it wakes for this one */
        x->next = deliver_at > x->now ? deliver_at : x->now;
        wake_runnable(vc);
    }
    pthread_mutex_unlock(&vc->mu);
}

void tess__tick_vclock_leave(tick_vclock *vc, int me)
{
    pthread_mutex_lock(&vc->mu);
    vc->p[me].next = INFINITY;
    vc->running--;
    wake_runnable(vc);
    pthread_mutex_unlock(&vc->mu);
}
