/*
 * fuzz_tick_state.c — libFuzzer target for the readers of packed tick state
 * (what one tick process sends another, and the final state): the grid
 * and particles classes' merge() into a live version, tess_grid_unpack,
 * tess_particles_unpack and tess_graph_unpack.  Any bytes must be taken or
 * refused with TESS_ERR_FORMAT — never a crash, an out-of-bounds access or a
 * leak.  A particles merge refused leaves the version as it was, one taken
 * holds no id twice, and pack() of a box afterwards gives exactly the
 * particles in it (pack skips and copies whole blocks of particles by
 * their boxes, which a merge appends to).  The first byte picks the reader.
 */
#include <math.h>
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/tick_graph.h"
#include "tessera/tick_grid.h"
#include "tessera/tick_particles.h"

enum { ROWS = 9, COLS = 7, FISH = 16, VERTICES = 32 };

static double zero(void *user, int64_t r, int64_t c)
{
    (void)user, (void)r, (void)c;
    return 0;
}

static void copy_row(void *user, const tess_grid_view *u, int64_t r, int64_t c0, int64_t c1,
                     int64_t tick, double *out)
{
    (void)user, (void)tick;
    for (int64_t c = c0; c < c1; c++) out[c - c0] = tess_grid_at(u, r, c);
}

static void grid_merge(const uint8_t *data, size_t size)
{
    static tess_grid_fns fns = {.rows = ROWS, .cols = COLS, .init = zero, .step_row = copy_row};
    tess_tick_app app = {.name = "fuzz", .state = &tess_grid_class, .class_fns = &fns};
    tess_query own = tess_grid_query((tess_grid_rect){2, 6, 1, 5});
    tess_query hull = tess_grid_query((tess_grid_rect){1, 8, 0, 6});
    void *st = tess_grid_class.create(&app, 2, &own, &hull);
    if (st == NULL) return;
    tess_region r = {.npos = 1, .pos = &own};
    (void)tess_grid_class.merge(st, 0, data, size, NULL);
    (void)tess_grid_class.merge(st, 1, data, size, &r);
    tess_query all = tess_grid_query((tess_grid_rect){0, ROWS, 0, COLS});
    tess_region ar = {.npos = 1, .pos = &all};
    tess_buf b = {0};
    if (tess_grid_class.pack(st, 0, &ar, &b) == TESS_OK) {
        double *out = calloc(ROWS * COLS, sizeof *out);
        /* What the class packs it must read back. */
        if (out && tess_grid_unpack(b.data, b.len, ROWS, COLS, out) != TESS_OK) __builtin_trap();
        free(out);
    }
    tess_buf_free(&b);
    (void)tess_grid_class.step(st, 0, 1, &r, 0);
    tess_grid_class.destroy(st);
}

static void fish_init(void *user, uint64_t id, tess_particle *out)
{
    (void)user;
    *out = (tess_particle){.x = (double)(id % 4), .y = (double)(id / 4)};
}

static void fish_stay(void *user, const tess_particle *self, const tess_particle *nbrs, size_t n,
                      int64_t tick, tess_particle *out)
{
    (void)user, (void)nbrs, (void)n, (void)tick;
    *out = *self;
}

static void same_query(void *user, const tess_query *q, tess_query *out)
{
    (void)user;
    *out = *q;
}

static size_t count_in(const tess_particles_view *v, tess_particle_rect b)
{
    size_t n = 0;
    for (int64_t i = 0; i < v->count; i++)
        n += tess_particle_rect_contains(&b, v->p[i].x, v->p[i].y);
    return n;
}

/* Every id at most once, and below FISH. */
static void check_ids(const tess_particles_view *v)
{
    uint64_t seen = 0;
    for (int64_t i = 0; i < v->count; i++) {
        uint64_t id = v->p[i].id;
        if (id >= FISH || (seen >> id & 1)) __builtin_trap();
        seen |= (uint64_t)1 << id;
    }
}

static void particles_merge(const uint8_t *data, size_t size)
{
    static tess_particle_fns fns = {
        .count = FISH, .radius = 1, .init = fish_init, .step = fish_stay};
    tess_tick_app app = {
        .name = "fuzz", .state = &tess_particles_class, .class_fns = &fns, .wd = same_query};
    tess_query all =
        tess_particle_query((tess_particle_rect){-INFINITY, INFINITY, -INFINITY, INFINITY});
    tess_query left = tess_particle_query((tess_particle_rect){0, 2, -INFINITY, INFINITY});
    tess_region rl = {.npos = 1, .pos = &left};
    void *st = tess_particles_class.create(&app, 2, &all, &all);
    if (st == NULL) return;
    tess_buf b = {0};
    /* A pack first, so the block boxes exist when the merge appends. */
    if (tess_particles_class.init(st, 0, &rl) != TESS_OK ||
        tess_particles_class.pack(st, 0, &rl, &b) != TESS_OK)
        __builtin_trap();
    const tess_particles_view *v = tess_particles_class.snapshot(st, 0);
    int64_t before = v->count;
    int rc = tess_particles_class.merge(st, 0, data, size, NULL);
    if (rc != TESS_OK && rc != TESS_ERR_FORMAT) __builtin_trap();
    v = tess_particles_class.snapshot(st, 0);
    if (rc != TESS_OK && v->count != before) __builtin_trap();
    check_ids(v);
    const tess_particle_rect boxes[] = {{0, 2, -INFINITY, INFINITY},
                                        {-INFINITY, INFINITY, -INFINITY, INFINITY},
                                        {1, 3, 0, 2},
                                        {-1e300, 0.5, -1e300, 1e300},
                                        {0.25, 0.75, -8, 8}};
    for (size_t i = 0; i < sizeof boxes / sizeof boxes[0]; i++) {
        tess_query q = tess_particle_query(boxes[i]);
        tess_region r = {.npos = 1, .pos = &q};
        b.len = 0;
        if (tess_particles_class.pack(st, 0, &r, &b) != TESS_OK) __builtin_trap();
        if (b.len / TESS_PARTICLE_BYTES != count_in(v, boxes[i])) __builtin_trap();
    }
    rc = tess_particles_class.merge(st, 1, data, size, &rl);
    if (rc != TESS_OK && rc != TESS_ERR_FORMAT) __builtin_trap();
    check_ids(tess_particles_class.snapshot(st, 1));
    tess_buf_free(&b);
    tess_particles_class.destroy(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    uint8_t which = data[0] % 5;
    data++, size--;
    if (which == 0) {
        grid_merge(data, size);
    } else if (which == 1) {
        double out[ROWS * COLS];
        (void)tess_grid_unpack(data, size, ROWS, COLS, out);
    } else if (which == 2) {
        tess_particle out[FISH];
        (void)tess_particles_unpack(data, size, FISH, out);
    } else if (which == 3) {
        particles_merge(data, size);
    } else {
        double out[VERTICES];
        uint64_t n;
        (void)tess_graph_unpack(data, size, VERTICES, out, &n);
    }
    return 0;
}
