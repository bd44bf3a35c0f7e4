/*
 * test_tick_vclock.c — the rule of the virtual clock (vclock.c): a process
 * waiting until time T is not woken past a message another process sends it
 * later in real time but due earlier in simulated time, whatever order the
 * threads run in; and a ring of many processes that send, compute and wait
 * ends (no deadlock) with every wake-up inside its wait.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_main.h"
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "tick/tick_internal.h"

typedef struct pair_arg {
    tick_vclock *vc;
    double woke[2];
    int sender_delay_us; /* real time the sender sleeps first: any order must give one answer */
} pair_arg;

static void *pair_sender(void *p)
{
    pair_arg *a = p;
    usleep((useconds_t)a->sender_delay_us);
    tess__tick_vclock_advance(a->vc, 0, 10.0); /* computed until 10 */
    tess__tick_vclock_sent(a->vc, 1, 15.0);    /* a message due at 15 */
    tess__tick_vclock_advance(a->vc, 0, 30.0);
    tess__tick_vclock_leave(a->vc, 0);
    return NULL;
}

static void *pair_receiver(void *p)
{
    pair_arg *a = p;
    a->woke[0] = tess__tick_vclock_wait(a->vc, 1, 0.0, 100.0);        /* the message's time */
    a->woke[1] = tess__tick_vclock_wait(a->vc, 1, a->woke[0], 100.0); /* then the timeout */
    tess__tick_vclock_leave(a->vc, 1);
    return NULL;
}

static void test_wait_stops_at_a_later_sent_message(void **state)
{
    (void)state;
    for (int delay = 0; delay <= 20000; delay += 10000) {
        pair_arg a = {.vc = tess__tick_vclock_new(2), .sender_delay_us = delay};
        assert_non_null(a.vc);
        pthread_t s, r;
        assert_int_equal(pthread_create(&r, NULL, pair_receiver, &a), 0);
        assert_int_equal(pthread_create(&s, NULL, pair_sender, &a), 0);
        pthread_join(s, NULL);
        pthread_join(r, NULL);
        assert_true(a.woke[0] == 15.0);
        assert_true(a.woke[1] == 100.0);
        tess__tick_vclock_free(a.vc);
    }
}

enum { RING = 64, STEPS = 40 };

typedef struct ring_arg {
    tick_vclock *vc;
    int me;
    int bad; /* a wake-up before the wait began or after its timeout */
} ring_arg;

static void *ring_proc(void *p)
{
    ring_arg *a = p;
    double now = 0.0;
    for (int s = 0; s < STEPS; s++) {
        now += 100.0 + a->me % 7; /* compute */
        tess__tick_vclock_advance(a->vc, a->me, now);
        tess__tick_vclock_sent(a->vc, (a->me + 1) % RING, now + 50.0 + s % 5);
        double until = now + 500.0, woke = tess__tick_vclock_wait(a->vc, a->me, now, until);
        if (woke < now || woke > until) a->bad = 1;
        now = woke;
    }
    tess__tick_vclock_leave(a->vc, a->me);
    return NULL;
}

static void test_ring_of_many_ends(void **state)
{
    (void)state;
    tick_vclock *vc = tess__tick_vclock_new(RING);
    assert_non_null(vc);
    pthread_t t[RING];
    ring_arg a[RING];
    for (int i = 0; i < RING; i++) {
        a[i] = (ring_arg){.vc = vc, .me = i};
        assert_int_equal(pthread_create(&t[i], NULL, ring_proc, &a[i]), 0);
    }
    for (int i = 0; i < RING; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(a[i].bad, 0);
    }
    tess__tick_vclock_free(vc);
}

TEST_MAIN(cmocka_unit_test(test_wait_stops_at_a_later_sent_message),
          cmocka_unit_test(test_ring_of_many_ends))
