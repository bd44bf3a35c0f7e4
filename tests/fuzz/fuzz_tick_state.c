/*
 * fuzz_tick_state.c — libFuzzer target for the readers of packed tick state
 * (what one tick process sends another, and the final state): the grid
 * class's merge() into a live version and tess_grid_unpack, and
 * tess_particles_unpack and tess_graph_unpack.  Any bytes must be taken or
 * refused with TESS_ERR_FORMAT — never a crash, an out-of-bounds access or a
 * leak.  The first byte picks the reader.
 */
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    uint8_t which = data[0] % 4;
    data++, size--;
    if (which == 0) {
        grid_merge(data, size);
    } else if (which == 1) {
        double out[ROWS * COLS];
        (void)tess_grid_unpack(data, size, ROWS, COLS, out);
    } else if (which == 2) {
        tess_particle out[FISH];
        (void)tess_particles_unpack(data, size, FISH, out);
    } else {
        double out[VERTICES];
        uint64_t n;
        (void)tess_graph_unpack(data, size, VERTICES, out, &n);
    }
    return 0;
}
