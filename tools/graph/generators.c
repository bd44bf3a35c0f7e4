/*
 * generators.c — parse a generator spec ("rmat:20", "uniform:100:1000:7",
 * "web:100000") and run the generator, then renumber its raw ids.  Spec
 * errors name the whole spec and the field, and return TESS_ERR_INVAL.
 */
#include <stdlib.h>
#include <string.h>

#include "generators_internal.h"
#include "tessera/tessera.h"

#define SPEC_MAX_FIELDS 4
#define DEFAULT_SEED 1
#define RMAT_DEFAULT_EDGEFACTOR 16
#define UNIFORM_MAX_EDGES (UINT64_C(1) << 40)

typedef struct field_rule {
    const char *name;
    uint64_t lo, hi;
    uint64_t dflt;
} field_rule;

typedef struct generator {
    const char *name;
    const char *usage;
    int required;
    int nrules;
    field_rule rules[3];
} generator;

static const generator generators[] = {
    {"rmat",
     "rmat:SCALE[:EDGEFACTOR[:SEED]]",
     1,
     3,
     {{"SCALE", 1, 31, 0},
      {"EDGEFACTOR", 1, 1024, RMAT_DEFAULT_EDGEFACTOR},
      {"SEED", 0, UINT64_MAX, DEFAULT_SEED}}},
    {"uniform",
     "uniform:N:M[:SEED]",
     2,
     3,
     {{"N", 1, UINT64_MAX, 0},
      {"M", 1, UNIFORM_MAX_EDGES, 0},
      {"SEED", 0, UINT64_MAX, DEFAULT_SEED}}},
    {"web",
     "web:PAGES[:SEED]",
     1,
     2,
     {{"PAGES", 1, UINT32_MAX, 0}, {"SEED", 0, UINT64_MAX, DEFAULT_SEED}}},
};

/* Strict unsigned decimal: digits only, no sign or spaces, no overflow. */
static int parse_u64(const char *s, size_t len, uint64_t *out)
{
    uint64_t v = 0;
    if (len == 0 || len > 20) return -1;
    for (size_t i = 0; i < len; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (d > 9 || v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

static const generator *find_generator(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof generators / sizeof generators[0]; i++)
        if (strlen(generators[i].name) == len && memcmp(generators[i].name, name, len) == 0)
            return &generators[i];
    return NULL;
}

/* Split spec at ':' into fields; returns the field count or -1 if too many. */
static int split(const char *spec, const char *start[], size_t len[])
{
    int n = 0;
    const char *s = spec;
    for (;;) {
        const char *c = strchr(s, ':');
        if (n == SPEC_MAX_FIELDS) return -1;
        start[n] = s;
        len[n] = c ? (size_t)(c - s) : strlen(s);
        n++;
        if (c == NULL) return n;
        s = c + 1;
    }
}

/* Fill values[] (defaults applied) from a spec; returns the generator. */
static int parse_spec(const char *spec, const generator **gen_out, uint64_t values[3], char *err,
                      size_t errlen)
{
    const char *start[SPEC_MAX_FIELDS];
    size_t len[SPEC_MAX_FIELDS];
    int n = split(spec, start, len);
    const generator *gen = find_generator(start[0], len[0]);
    if (gen == NULL)
        return tg__err(TESS_ERR_INVAL, err, errlen,
                       "%s: unknown graph generator \"%.*s\" (expected rmat, uniform or web)", spec,
                       (int)(len[0] > 40 ? 40 : len[0]), start[0]);
    if (n < 0 || n - 1 > gen->nrules)
        return tg__err(TESS_ERR_INVAL, err, errlen, "%s: too many fields (expected %s)", spec,
                       gen->usage);
    if (n - 1 < gen->required)
        return tg__err(TESS_ERR_INVAL, err, errlen, "%s: missing %s (expected %s)", spec,
                       gen->rules[n - 1].name, gen->usage);
    for (int i = 0; i < gen->nrules; i++) {
        const field_rule *r = &gen->rules[i];
        values[i] = r->dflt;
        if (i + 1 < n && (parse_u64(start[i + 1], len[i + 1], &values[i]) != 0 ||
                          values[i] < r->lo || values[i] > r->hi))
            return tg__err(TESS_ERR_INVAL, err, errlen, "%s: %s must be an integer in [%llu, %llu]",
                           spec, r->name, (unsigned long long)r->lo, (unsigned long long)r->hi);
    }
    *gen_out = gen;
    return 0;
}

int tg_check_spec(const char *spec, char *err, size_t errlen)
{
    const generator *gen;
    uint64_t values[3];
    return parse_spec(spec, &gen, values, err, errlen);
}

/* Site bounds in page ids -> internal indices; sites left empty because
 * renumbering dropped all their pages (isolated, dangling) disappear. */
static int renumber_sites(tg_graph *g, const uint64_t *raw_first, uint64_t nsites)
{
    uint64_t *first = malloc((size_t)(nsites + 1) * sizeof *first);
    if (first == NULL) return TESS_ERR_NOMEM;
    uint64_t n = 0, v = 0;
    first[0] = 0;
    for (uint64_t s = 1; s <= nsites; s++) {
        while (v < g->nv && g->ids[v] < raw_first[s]) v++;
        if (v > first[n]) first[++n] = v;
    }
    g->site_first = first;
    g->nsites = n;
    return 0;
}

static int run(const generator *gen, const uint64_t *val, tg__edges *raw, uint64_t **sites,
               uint64_t *nsites)
{
    switch (gen->name[0]) {
    case 'r': return tg__gen_rmat((unsigned)val[0], val[1], val[2], raw);
    case 'u': return tg__gen_uniform(val[0], val[1], val[2], raw);
    default: return tg__gen_web(val[0], val[1], raw, sites, nsites);
    }
}

int tg_generate(const char *spec, tg_graph *g, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    const generator *gen;
    uint64_t values[3];
    int rc = parse_spec(spec, &gen, values, err, errlen);
    if (rc != 0) return rc;
    tg__edges raw = {0};
    uint64_t *sites = NULL, nsites = 0;
    rc = run(gen, values, &raw, &sites, &nsites);
    if (rc != 0) tg__err(rc, err, errlen, "%s: out of memory", spec);
    else rc = tg__renumber(raw.src, raw.dst, raw.n, g, spec, err, errlen);
    tg__edges_free(&raw);
    if (rc == 0 && sites != NULL && (rc = renumber_sites(g, sites, nsites)) != 0)
        tg__err(rc, err, errlen, "%s: out of memory", spec);
    free(sites);
    if (rc != 0) tg_free(g);
    return rc;
}
