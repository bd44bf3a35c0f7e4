/*
 * test_tile_stats.c — the split of a tiles run's seconds (src/tile/stats.c,
 * tess__tile_stats_finish) into BOOT, PROC, L-IMB, INIT, TCP, OUT and OVER,
 * on figures written here: the parts always sum to the seconds, INIT, TCP
 * and OUT are the most one thread (processor or controller) spent on each,
 * and where they overlapped the processing they are cut in the documented
 * order (tile.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "tile/tile_internal.h"

/* A run of `seconds` on one rank (boot at `boot`) with two processors. */
static void run_of(tess_tile_stats *s, double seconds, double boot)
{
    tess__tile_stats_begin(s, 1, "apc");
    s->procs = calloc(2, sizeof *s->procs);
    assert_non_null(s->procs);
    s->nprocs = 2;
    s->seconds = seconds;
    s->ranks[0].boot_seconds = boot;
}

static void assert_sums(const tess_tile_stats *s)
{
    double sum = s->boot + s->proc + s->limb + s->init + s->tcp + s->out + s->over;
    assert_true(sum > s->seconds - 1e-12 && sum < s->seconds + 1e-12);
    assert_true(s->boot >= 0 && s->proc >= 0 && s->limb >= 0 && s->init >= 0);
    assert_true(s->tcp >= 0 && s->out >= 0 && s->over >= 0);
}

static void close_to(double a, double b) { assert_true(a > b - 1e-9 && a < b + 1e-9); }

/* What a test run measured: its seconds and bootstrap, each of the two
 * processors' busy seconds after the bootstrap, INIT and TCP, and the
 * controller's TCP and OUT. */
typedef struct figures {
    double seconds, boot;
    double busy[2], init[2], tcp[2];
    double ctl_tcp, ctl_out;
} figures;

/* The statistics of a run of the figures f, split. */
static void finish_run(tess_tile_stats *s, const figures *f)
{
    run_of(s, f->seconds, f->boot);
    for (int i = 0; i < 2; i++) {
        s->procs[i].busy_after_boot = f->busy[i];
        s->procs[i].init = f->init[i];
        s->procs[i].tcp = f->tcp[i];
    }
    s->ranks[0].tcp_seconds = f->ctl_tcp;
    s->ranks[0].out_seconds = f->ctl_out;
    tess__tile_stats_finish(s);
}

/* The seven parts a test expects of a finished run, in this order. */
typedef struct split {
    double boot, proc, limb, init, tcp, out, over;
} split;

/* Checks each part of the finished run s against `want` and that they
 * sum to its seconds; frees s. */
static void expect_split(tess_tile_stats *s, split want)
{
    close_to(s->boot, want.boot);
    close_to(s->proc, want.proc);
    close_to(s->limb, want.limb);
    close_to(s->init, want.init);
    close_to(s->tcp, want.tcp);
    close_to(s->out, want.out);
    close_to(s->over, want.over);
    assert_sums(s);
    tess_tile_stats_free(s);
}

/* Input read in the processors' own threads: serial with their kernels;
 * the controller's write() calls are OUT. */
static void test_io_beside_processing(void **state)
{
    (void)state;
    tess_tile_stats s;
    figures f = {.seconds = 10.0,
                 .boot = 1.0,
                 .busy = {6.0, 5.0},
                 .init = {2.0, 1.5},
                 .tcp = {0, 0.5},
                 .ctl_out = 0.25};
    finish_run(&s, &f);
    /* INIT: the most one thread spent, not the sum */
    expect_split(&s, (split){1.0, 5.0, 1.0, 2.0, 0.5, 0.25, 0.25});
}

/* A controller writing while the processors compute: only the part the
 * processing left uncovered is OUT, after INIT and TCP took theirs. */
static void test_overlap_cut_in_order(void **state)
{
    (void)state;
    tess_tile_stats s;
    figures f = {
        .seconds = 10.0, .busy = {8.0, 8.0}, .init = {1.0, 0}, .ctl_tcp = 0.5, .ctl_out = 5.0};
    finish_run(&s, &f);
    expect_split(&s, (split){0.0, 8.0, 0.0, 1.0, 0.5, 0.5, 0.0});
}

/* Processing measured past the wall time after the bootstrap (a tile begun
 * just before it ended): PROC and L-IMB scaled into it, nothing else left. */
static void test_clamped(void **state)
{
    (void)state;
    tess_tile_stats s;
    finish_run(&s, &(figures){.seconds = 4.0, .boot = 2.0, .busy = {3.0, 1.5}, .init = {0, 1.0}});
    close_to(s.proc + s.limb, 2.0);
    close_to(s.init + s.tcp + s.out + s.over, 0.0);
    assert_sums(&s);
    tess_tile_stats_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_io_beside_processing),
        cmocka_unit_test(test_overlap_cut_in_order),
        cmocka_unit_test(test_clamped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
