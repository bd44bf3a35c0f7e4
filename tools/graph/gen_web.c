/*
 * gen_web.c — a synthetic web graph in the spirit of Piccolo §6.1: pages
 * grouped into sites of heavy-tailed size, most links staying inside their
 * site, pages of a site numbered consecutively.  docs/formats.md
 * ("Graph generators") is the specification; the constants are here.
 *
 *  sites   Site s has min(remaining, floor(SITE_XM / U)) pages (Pareto,
 *          alpha 1), U = 1 - tess_rng_unit(seed, TG__STREAM_SITES, s);
 *          sites are drawn in order until PAGES pages are placed.
 *  degree  Page p: u = tess_rng_unit(seed, p, 0).  u < DANGLING: no links;
 *          otherwise min(DEG_CAP, floor(DEG_XM / sqrt(V))) (Pareto, alpha
 *          2) with V = 1 - (u - DANGLING) / (1 - DANGLING).
 *
 * Only +, -, *, / and sqrt are used (all correctly rounded in IEEE 754), so
 * every machine generates the same graph; pow() could differ in a last bit.
 *  links   Link j of page p: w = unit(seed, p, 1+2j), v = unit(seed, p, 2+2j).
 *          If w < INTRA and the site has another page: target = site start
 *          + floor(size * v^2), moved one page on (cyclically) if it is p
 *          itself.  Otherwise target = floor(PAGES * v^2) over all pages.
 *          v^2 skews targets to the front of a site (its "home" pages) and
 *          to the front of the web, giving heavy-tailed in-degrees.
 */
#include <math.h>
#include <stdlib.h>

#include "generators_internal.h"
#include "tessera/rng.h"
#include "tessera/tessera.h"

#define SITE_XM 2.0
#define DANGLING 0.05
#define DEG_XM 6.0
#define DEG_CAP 1000
#define INTRA 0.85

/* x / u for u in (0, 1], floored and capped. */
static uint64_t floor_capped(double x, double u, uint64_t cap)
{
    double v = x / u;
    return v >= (double)cap ? cap : (uint64_t)v;
}

static int draw_sites(uint64_t pages, uint64_t seed, uint64_t **first_out, uint64_t *n_out)
{
    uint64_t cap = 1024, n = 0, placed = 0;
    uint64_t *first = malloc(cap * sizeof *first);
    if (first == NULL) return TESS_ERR_NOMEM;
    while (placed < pages) {
        if (n + 2 > cap) {
            uint64_t *bigger = realloc(first, 2 * cap * sizeof *first);
            if (bigger == NULL) {
                free(first);
                return TESS_ERR_NOMEM;
            }
            first = bigger;
            cap *= 2;
        }
        double u = 1.0 - tess_rng_unit(seed, TG__STREAM_SITES, n);
        first[n++] = placed;
        placed += floor_capped(SITE_XM, u, pages - placed);
    }
    first[n] = pages;
    *first_out = first;
    *n_out = n;
    return 0;
}

static uint64_t page_degree(uint64_t seed, uint64_t p)
{
    double u = tess_rng_unit(seed, p, 0);
    if (u < DANGLING) return 0;
    return floor_capped(DEG_XM, sqrt(1.0 - (u - DANGLING) / (1.0 - DANGLING)), DEG_CAP);
}

static uint64_t link_target(uint64_t seed, uint64_t pages, uint64_t p, uint64_t j, uint64_t site_lo,
                            uint64_t site_n)
{
    double w = tess_rng_unit(seed, p, 1 + 2 * j);
    double v = tess_rng_unit(seed, p, 2 + 2 * j);
    if (w < INTRA && site_n > 1) {
        uint64_t q = (uint64_t)((double)site_n * v * v);
        if (site_lo + q == p) q = (q + 1) % site_n;
        return site_lo + q;
    }
    return (uint64_t)((double)pages * v * v);
}

static int gen_site(uint64_t seed, uint64_t pages, uint64_t lo, uint64_t hi, tg__edges *out)
{
    for (uint64_t p = lo; p < hi; p++) {
        uint64_t deg = page_degree(seed, p);
        if (out->n + deg > out->cap &&
            tg__edges_reserve(out, 2 * out->cap > out->n + deg ? 2 * out->cap : out->n + deg) != 0)
            return TESS_ERR_NOMEM;
        for (uint64_t j = 0; j < deg; j++) {
            out->src[out->n] = p;
            out->dst[out->n] = link_target(seed, pages, p, j, lo, hi - lo);
            out->n++;
        }
    }
    return 0;
}

int tg__gen_web(uint64_t pages, uint64_t seed, tg__edges *out, uint64_t **site_first_out,
                uint64_t *nsites_out)
{
    uint64_t *first, nsites;
    if (draw_sites(pages, seed, &first, &nsites) != 0) return TESS_ERR_NOMEM;
    int rc = tg__edges_reserve(out, pages * 12 + 16);
    for (uint64_t s = 0; s < nsites && rc == 0; s++)
        rc = gen_site(seed, pages, first[s], first[s + 1], out);
    if (rc != 0) {
        free(first);
        return rc;
    }
    *site_first_out = first;
    *nsites_out = nsites;
    return 0;
}
