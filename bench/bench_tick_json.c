/*
 * bench_tick_json.c — the JSON `tessera bench tick` reads and writes.
 *
 * Reading: the metrics a run writes (DESIGN §6) are one object whose keys of
 * interest are top-level numbers (per_worker, a list, is skipped), and the
 * bench's own records are flat objects; so a scanner that walks the top level
 * of one object, skipping nested values, is all that is needed.
 *
 * The store: one JSON object per line (JSON Lines), one line per measurement,
 * appended as soon as it is taken, so an interrupted series resumes where it
 * stopped.  A line {"bench":"tick","config":KEY,"reset":true} (written by
 * --fresh) forgets every earlier measurement of that configuration without
 * deleting anything; a later line for the same (configuration, technique,
 * round, jitter) replaces an earlier one.  scripts/plot_tick.py reads the
 * file by the same rules.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_tick.h"
#include "bench_util.h"
#include "common.h"

/* ------------------------------------------------------------- scanning */

static const char *skip_space(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

/* p at an opening quote: the character after the closing one, or NULL. */
static const char *skip_string(const char *p)
{
    for (p++; *p != '"'; p++) {
        if (*p == '\0') return NULL;
        if (*p == '\\' && *++p == '\0') return NULL;
    }
    return p + 1;
}

/* p at a value: the character after it, or NULL when malformed. */
static const char *skip_value(const char *p)
{
    if (*p == '"') return skip_string(p);
    if (*p != '{' && *p != '[') {
        const char *start = p;
        while (*p != '\0' && !strchr(",}] \t\r\n", *p)) p++;
        return p == start ? NULL : p;
    }
    int depth = 0;
    do {
        if (*p == '"') {
            if ((p = skip_string(p)) == NULL) return NULL;
            continue;
        }
        if (*p == '\0') return NULL;
        depth += (*p == '{' || *p == '[') - (*p == '}' || *p == ']');
        p++;
    } while (depth > 0);
    return p;
}

/* The value of the top-level `key` of the object at obj, or NULL. */
const char *bt_json_find(const char *obj, const char *key)
{
    size_t klen = strlen(key);
    const char *p = skip_space(obj);
    if (*p++ != '{') return NULL;
    for (;;) {
        p = skip_space(p);
        if (*p != '"') return NULL;
        const char *name = p + 1, *end = skip_string(p);
        if (end == NULL) return NULL;
        p = skip_space(end);
        if (*p++ != ':') return NULL;
        p = skip_space(p);
        if ((size_t)(end - 1 - name) == klen && memcmp(name, key, klen) == 0) return p;
        if ((p = skip_value(p)) == NULL) return NULL;
        p = skip_space(p);
        if (*p++ != ',') return NULL;
    }
}

/* A number, or true/false as 1/0, or null as NAN; 0, or -1 when absent. */
int bt_json_number(const char *obj, const char *key, double *out)
{
    const char *v = bt_json_find(obj, key);
    if (v == NULL) return -1;
    if (strncmp(v, "true", 4) == 0) return *out = 1.0, 0;
    if (strncmp(v, "false", 5) == 0) return *out = 0.0, 0;
    if (strncmp(v, "null", 4) == 0) return *out = NAN, 0;
    char *end;
    double x = strtod(v, &end);
    if (end == v) return -1;
    *out = x;
    return 0;
}

/* A string value (escapes other than \" \\ \/ kept as is); 0 or -1. */
int bt_json_string(const char *obj, const char *key, char *out, size_t len)
{
    const char *v = bt_json_find(obj, key);
    if (v == NULL || *v != '"' || len == 0) return -1;
    size_t n = 0;
    for (v++; *v != '"'; v++) {
        if (*v == '\0') return -1;
        if (*v == '\\' && strchr("\"\\/", v[1]) != NULL) v++;
        if (n + 1 < len) out[n++] = *v;
    }
    out[n] = '\0';
    return 0;
}

static double number_or_nan(const char *obj, const char *key)
{
    double x;
    return bt_json_number(obj, key, &x) == 0 ? x : NAN;
}

/* The figures of a metrics object (or of one of our records); 0, or -1 when
 * ticks_per_second is missing. */
int bt_figures_parse(const char *obj, bt_figures *fig)
{
    fig->tps = number_or_nan(obj, "ticks_per_second");
    fig->tuple_tps = number_or_nan(obj, "tuple_ticks_per_second");
    fig->wall = number_or_nan(obj, "wall_seconds");
    fig->tick_seconds = number_or_nan(obj, "tick_seconds");
    fig->step = number_or_nan(obj, "step_seconds");
    fig->wait = number_or_nan(obj, "wait_seconds");
    fig->runtime = number_or_nan(obj, "runtime_seconds");
    fig->runtime_cpu = number_or_nan(obj, "runtime_cpu_seconds");
    fig->messages = number_or_nan(obj, "messages");
    fig->bytes = number_or_nan(obj, "bytes");
    fig->edges = number_or_nan(obj, "edges");
    double w = number_or_nan(obj, "workers_total"), e = number_or_nan(obj, "emulated");
    fig->workers_total = isfinite(w) ? (long)w : 0;
    fig->emulated = e == 1.0;
    return isfinite(fig->tps) ? 0 : -1;
}

/* ---------------------------------------------------------------- store */

const bt_record *bt_store_find(const bt_store *st, const char *key, bt_tech t, int round,
                               int jittered)
{
    for (int i = 0; i < st->n; i++) {
        const bt_record *r = &st->v[i];
        if (r->tech == t && r->round == round && r->jittered == jittered &&
            strcmp(r->key, key) == 0)
            return r;
    }
    return NULL;
}

int bt_store_put(bt_store *st, const bt_record *rec)
{
    bt_record *old = (bt_record *)bt_store_find(st, rec->key, rec->tech, rec->round, rec->jittered);
    if (old != NULL) return *old = *rec, 0;
    if (st->n == st->cap) {
        int cap = st->cap ? 2 * st->cap : 256;
        bt_record *bigger = realloc(st->v, (size_t)cap * sizeof *bigger);
        if (bigger == NULL) {
            app_error(BT_NAME, "%s", tess_strerror(TESS_ERR_NOMEM));
            return -1;
        }
        st->v = bigger;
        st->cap = cap;
    }
    st->v[st->n++] = *rec;
    return 0;
}

void bt_store_drop(bt_store *st, const char *key)
{
    int k = 0;
    for (int i = 0; i < st->n; i++)
        if (strcmp(st->v[i].key, key) != 0) st->v[k++] = st->v[i];
    st->n = k;
}

void bt_store_free(bt_store *st)
{
    free(st->v);
    *st = (bt_store){0};
}

static int tech_from_name(const char *name)
{
    for (int t = 0; t < BT_NTECH; t++)
        if (strcmp(name, bt_tech_names[t]) == 0) return t;
    return -1;
}

/* One line into the store: 1 taken, 0 not ours (other bench, unknown
 * technique), -1 malformed. */
static int load_line(bt_store *st, const char *line)
{
    char bench[16], tech[32];
    bt_record rec = {0};
    double round, jit, reset;
    if (bt_json_string(line, "bench", bench, sizeof bench) != 0 ||
        bt_json_string(line, "config", rec.key, sizeof rec.key) != 0)
        return -1;
    if (strcmp(bench, "tick") != 0) return 0;
    if (bt_json_number(line, "reset", &reset) == 0 && reset == 1.0) {
        bt_store_drop(st, rec.key);
        return 1;
    }
    if (bt_json_string(line, "technique", tech, sizeof tech) != 0 ||
        bt_json_number(line, "round", &round) != 0 ||
        bt_json_number(line, "with_jitter", &jit) != 0 || bt_figures_parse(line, &rec.fig) != 0)
        return -1;
    int t = tech_from_name(tech);
    if (t < 0 || round < 0 || round > 1e6) return 0;
    rec.tech = (bt_tech)t;
    rec.round = (int)round;
    rec.jittered = jit == 1.0;
    return bt_store_put(st, &rec) == 0 ? 1 : -1;
}

/* Load the measurements of an existing file (absent: nothing).  Malformed
 * lines — a line cut short by a crash — are skipped with one note. */
int bt_store_load(bt_store *st, const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        if (errno == ENOENT) return 0;
        app_error(BT_NAME, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0, bad = 0, first_bad = 0;
    while (getline(&line, &cap, f) > 0) {
        lineno++;
        if (*line == '\n') continue;
        if (load_line(st, line) < 0 && bad++ == 0) first_bad = lineno;
    }
    free(line);
    fclose(f);
    if (bad > 0)
        fprintf(stderr, "tessera %s: note: %s: skipped %ld malformed line%s (first: line %ld)\n",
                BT_NAME, path, bad, bad == 1 ? "" : "s", first_bad);
    return 0;
}

/* --------------------------------------------------------------- writing */

static void put_header(app_metrics *o, const bt_series *s)
{
    app_metrics_str(o, "bench", "tick");
    app_metrics_str(o, "config", s->key);
    bench_put_stamp(o);
}

static void put_params(app_metrics *o, const bt_series *s, bt_tech t, int round, int jittered)
{
    int sched = t == BT_SCHED || t == BT_COMBINED, repl = t == BT_REPL || t == BT_COMBINED;
    app_metrics_str(o, "regime", bt_regime_names[s->regime]);
    app_metrics_str(o, "app", bt_app_names[s->app]);
    app_metrics_str(o, "technique", bt_tech_names[t]);
    app_metrics_num(o, "round", round);
    app_metrics_num(o, "seed", (double)(s->seed + round));
    app_metrics_bool(o, "with_jitter", jittered);
    app_metrics_str(o, "jitter", jittered ? s->jitter : "none");
    app_metrics_str(o, "profile", s->jitter);
    app_metrics_num(o, "workers", (double)s->workers);
    app_metrics_num(o, "ranks", (double)s->ranks);
    app_metrics_num(o, "rows", s->app == BT_JACOBI ? (double)s->rows : NAN);
    app_metrics_num(o, "cols", s->app == BT_JACOBI ? (double)s->cols : NAN);
    app_metrics_num(o, "side", s->app == BT_JACOBI ? (double)s->side : NAN);
    app_metrics_num(o, "fish", s->app == BT_FISH ? (double)s->fish : NAN);
    app_metrics_num(o, "repart_every", s->app == BT_FISH ? (double)s->repart_every : NAN);
    app_metrics_num(o, "pages", s->app == BT_PAGERANK ? (double)s->pages : NAN);
    app_metrics_num(o, "ticks", (double)s->ticks);
    app_metrics_num(o, "step_cost_us", s->step_cost_us);
    app_metrics_str(o, "clock", s->virtual_clock ? "virtual" : "real");
    app_metrics_num(o, "d", (double)s->depth);
    app_metrics_num(o, "k", (double)s->period);
    app_metrics_num(o, "m", (double)s->layers);
    app_metrics_num(o, "depth", sched ? (double)s->depth : 1.0);
    app_metrics_num(o, "period", repl ? (double)s->period : 1.0);
    app_metrics_num(o, "layers", repl ? (double)s->layers : 0.0);
}

static void put_figures(app_metrics *o, const bt_figures *g)
{
    app_metrics_bool(o, "emulated", g->emulated);
    app_metrics_num(o, "workers_total", (double)g->workers_total);
    app_metrics_num(o, "ticks_per_second", g->tps);
    app_metrics_num(o, "tuple_ticks_per_second", g->tuple_tps);
    app_metrics_num(o, "wall_seconds", g->wall);
    app_metrics_num(o, "tick_seconds", g->tick_seconds);
    app_metrics_num(o, "step_seconds", g->step);
    app_metrics_num(o, "wait_seconds", g->wait);
    app_metrics_num(o, "runtime_seconds", g->runtime);
    app_metrics_num(o, "runtime_cpu_seconds", g->runtime_cpu);
    app_metrics_num(o, "messages", g->messages);
    app_metrics_num(o, "bytes", g->bytes);
    if (isfinite(g->edges)) {
        app_metrics_num(o, "edges", g->edges);
        app_metrics_num(o, "edge_ticks_per_second", g->edges * g->tps);
    }
}

static int append_record(const char *path, app_metrics *o)
{
    int rc = app_metrics_append_line(o, path, BT_NAME);
    app_metrics_free(o);
    return rc;
}

int bt_append_record(const char *path, const bt_series *s, bt_tech t, int round, int jittered,
                     const bt_figures *fig)
{
    app_metrics *o = app_metrics_new();
    put_header(o, s);
    put_params(o, s, t, round, jittered);
    put_figures(o, fig);
    return append_record(path, o);
}

int bt_append_reset(const char *path, const bt_series *s)
{
    app_metrics *o = app_metrics_new();
    put_header(o, s);
    app_metrics_bool(o, "reset", 1);
    return append_record(path, o);
}
