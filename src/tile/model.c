/*
 * model.c — the performance model of a processor and the bootstrap of tile
 * sizes (model.h).
 */
#include <string.h>
#include "tile/model.h"

static int size_class(uint64_t cells)
{
    int c = 0;
    while (cells > 1) {
        cells >>= 1;
        c++;
    }
    return c;
}

void tess__tile_model_init(tess__tile_model *m) { memset(m, 0, sizeof *m); }

void tess__tile_model_add(tess__tile_model *m, uint64_t cells, double seconds)
{
    if (cells == 0 || !(seconds > 0)) return;
    int c = size_class(cells);
    m->cells[c] += (double)cells;
    m->seconds[c] += seconds;
    m->tiles[c]++;
}

void tess__tile_model_scale(tess__tile_model *m, double factor)
{
    if (!(factor > 0)) return;
    for (int c = 0; c < TESS__TILE_CLASSES; c++) m->seconds[c] *= factor;
}

double tess__tile_model_rate(const tess__tile_model *m, uint64_t cells)
{
    int c = size_class(cells ? cells : 1);
    return m->tiles[c] ? m->cells[c] / m->seconds[c] : 0.0;
}

uint64_t tess__tile_model_best_size(const tess__tile_model *m, double *rate_out)
{
    return tess__tile_model_best_from(m, 1, rate_out);
}

uint64_t tess__tile_model_best_from(const tess__tile_model *m, uint64_t floor, double *rate_out)
{
    int best = -1;
    double best_rate = 0.0;
    for (int c = size_class(floor ? floor : 1); c < TESS__TILE_CLASSES; c++) {
        if (m->tiles[c] == 0) continue;
        double r = m->cells[c] / m->seconds[c];
        if (r >= best_rate) {
            best_rate = r;
            best = c;
        }
    }
    /* Tiles of a few microseconds measure noisily: prefer the largest class
     * within TESS__TILE_NEAR of the best rate (fewer tiles, less overhead). */
    for (int c = TESS__TILE_CLASSES - 1; c > best && best >= 0; c--) {
        if (m->tiles[c] == 0) continue;
        double r = m->cells[c] / m->seconds[c];
        if (r >= TESS__TILE_NEAR * best_rate) {
            best = c;
            best_rate = r;
            break;
        }
    }
    if (rate_out != NULL) *rate_out = best_rate;
    if (best < 0) return 0;
    return (uint64_t)(m->cells[best] / m->tiles[best] + 0.5);
}

void tess__tile_boot_init(tess__tile_boot *b, uint64_t min, uint64_t max, double threshold)
{
    uint64_t first = min ? min : 1;
    /* nothing handed out or measured yet: every other field 0 */
    *b =
        (tess__tile_boot){.next = first, .max = max >= first ? max : first, .threshold = threshold};
}

uint64_t tess__tile_boot_want(const tess__tile_boot *b, int queued)
{
    if (queued >= 2) return 0;
    if (queued == 1 && b->handed >= 2) {
        if (b->last_cells == 0) return 0; /* how long the running tile takes is unknown */
        double expect = b->last_seconds * (double)b->ahead / (double)b->last_cells;
        if (expect >= b->threshold / 2) return 0;
    }
    if (b->handed < 2) return b->next;
    return b->ahead > b->max / 2 ? b->max : 2 * b->ahead;
}

void tess__tile_boot_handed(tess__tile_boot *b, uint64_t cells)
{
    b->ahead = cells;
    b->handed++;
}

/* Did the rate still rise, over the best of the smaller sizes?  (The best,
 * not the last: one preempted tile would make any next one look faster.)
 * Unknown (no earlier result) counts as rising: the next size tells. */
static int rate_rises(const tess__tile_boot *b, uint64_t cells, double seconds)
{
    if (!(b->best_rate > 0) || cells <= b->last_cells) return 1;
    return (double)cells / seconds > TESS__TILE_RISE * b->best_rate;
}

int tess__tile_boot_record(tess__tile_boot *b, uint64_t cells, double seconds)
{
    if (b->done) return 1;
    int rises = rate_rises(b, cells, seconds);
    if (cells > b->last_cells) b->prev_cells = b->last_cells, b->prev_seconds = b->last_seconds;
    b->last_cells = cells;
    b->last_seconds = seconds;
    if (seconds > 0 && (double)cells / seconds > b->best_rate)
        b->best_rate = (double)cells / seconds;
    if ((seconds >= b->threshold && !rises) || cells >= b->max) {
        b->done = 1;
        return 1;
    }
    uint64_t twice = cells > b->max / 2 ? b->max : 2 * cells;
    if (twice > b->next) b->next = twice;
    return 0;
}

double tess__tile_boot_potential(const tess__tile_boot *b)
{
    double r = b->best_rate, cap = TESS__TILE_POTENTIAL * b->best_rate;
    if (b->done || !(r > 0) || b->prev_cells == 0 || b->last_cells <= b->prev_cells) return r;
    double dt = b->last_seconds - b->prev_seconds;
    double slope = dt > 0 ? (double)(b->last_cells - b->prev_cells) / dt : cap;
    return slope < r ? r : slope > cap ? cap : slope;
}
