/*
 * metrics.c — the metrics JSON object written by --metrics FILE.  Entries
 * keep the order in which keys were first set (setting a key again replaces
 * its value in place), so files diff cleanly between runs.  Numbers are
 * printed with %.17g so they read back bit-exact; non-finite numbers, which
 * JSON cannot express, are written as null.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

typedef enum {
    METRIC_STR,
    METRIC_NUM,
    METRIC_INT,
    METRIC_BOOL,
    METRIC_LIST,
    METRIC_OBJECTS
} metric_kind;

typedef struct metric {
    char *key;
    metric_kind kind;
    char *str;
    double num;
    int64_t integer;
    double *list;
    int list_len;
    app_metrics **objects; /* METRIC_OBJECTS: owned; one object unless is_array */
    int nobjects;
    int is_array;
} metric;

struct app_metrics {
    metric *items;
    int count;
    int cap;
    int out_of_memory; /* a setter failed; reported by app_metrics_write */
};

app_metrics *app_metrics_new(void) { return calloc(1, sizeof(app_metrics)); }

static void metric_clear_value(metric *e)
{
    free(e->str);
    free(e->list);
    for (int i = 0; i < e->nobjects; i++) app_metrics_free(e->objects[i]);
    free(e->objects);
    e->str = NULL;
    e->list = NULL;
    e->list_len = 0;
    e->objects = NULL;
    e->nobjects = 0;
}

void app_metrics_free(app_metrics *m)
{
    if (!m) return;
    for (int i = 0; i < m->count; i++) {
        metric_clear_value(&m->items[i]);
        free(m->items[i].key);
    }
    free(m->items);
    free(m);
}

static metric *metrics_append(app_metrics *m, const char *key)
{
    if (m->count == m->cap) {
        int cap = m->cap ? 2 * m->cap : 16;
        metric *items = realloc(m->items, (size_t)cap * sizeof *items);
        if (!items) return NULL;
        m->items = items;
        m->cap = cap;
    }
    metric *e = &m->items[m->count];
    memset(e, 0, sizeof *e);
    e->key = strdup(key);
    if (!e->key) return NULL;
    m->count++;
    return e;
}

/* The entry for `key`, emptied for a new value; NULL (and flagged) on OOM. */
static metric *metrics_slot(app_metrics *m, const char *key, metric_kind kind)
{
    if (!m) return NULL;
    metric *e = NULL;
    for (int i = 0; i < m->count && !e; i++)
        if (strcmp(m->items[i].key, key) == 0) e = &m->items[i];
    if (e) metric_clear_value(e);
    else e = metrics_append(m, key);
    if (!e) {
        m->out_of_memory = 1;
        return NULL;
    }
    e->kind = kind;
    return e;
}

void app_metrics_str(app_metrics *m, const char *key, const char *value)
{
    metric *e = metrics_slot(m, key, METRIC_STR);
    if (e && !(e->str = strdup(value ? value : ""))) {
        e->kind = METRIC_BOOL; /* keep the entry printable */
        m->out_of_memory = 1;
    }
}

void app_metrics_num(app_metrics *m, const char *key, double value)
{
    metric *e = metrics_slot(m, key, METRIC_NUM);
    if (e) e->num = value;
}

void app_metrics_int(app_metrics *m, const char *key, int64_t value)
{
    metric *e = metrics_slot(m, key, METRIC_INT);
    if (e) e->integer = value;
}

void app_metrics_bool(app_metrics *m, const char *key, int value)
{
    metric *e = metrics_slot(m, key, METRIC_BOOL);
    if (e) e->integer = value != 0;
}

void app_metrics_list(app_metrics *m, const char *key, const double *values, int n)
{
    metric *e = metrics_slot(m, key, METRIC_LIST);
    if (!e || n <= 0) return;
    e->list = malloc((size_t)n * sizeof *values);
    if (!e->list) {
        m->out_of_memory = 1;
        return;
    }
    memcpy(e->list, values, (size_t)n * sizeof *values);
    e->list_len = n;
}

void app_metrics_objects(app_metrics *m, const char *key, app_metrics **objects, int n)
{
    metric *e = metrics_slot(m, key, METRIC_OBJECTS);
    int failed = e == NULL || n < 0;
    for (int i = 0; i < n && !failed; i++) failed = objects[i] == NULL || objects[i]->out_of_memory;
    if (!failed && n > 0 && !(e->objects = malloc((size_t)n * sizeof *objects))) failed = 1;
    if (failed) {
        for (int i = 0; i < n; i++) app_metrics_free(objects[i]);
        if (m) m->out_of_memory = 1;
        if (e) e->kind = METRIC_BOOL; /* keep the entry printable */
        return;
    }
    if (n > 0) memcpy(e->objects, objects, (size_t)n * sizeof *objects);
    e->nobjects = n;
    e->is_array = 1;
}

void app_metrics_object(app_metrics *m, const char *key, app_metrics *object)
{
    app_metrics_objects(m, key, &object, 1);
    for (int i = 0; m && i < m->count; i++)
        if (m->items[i].kind == METRIC_OBJECTS && strcmp(m->items[i].key, key) == 0)
            m->items[i].is_array = 0;
}

/* This process's (rank 0's) high-water mark of resident memory: VmHWM of
 * /proc/self/status, which belongs to the address space.  Not getrusage's
 * ru_maxrss, which Linux carries across exec: a run started by a large
 * process (a bench) would report its parent's peak.  0 if unknown. */
static int64_t peak_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL) return 0;
    char line[256];
    long long kb = 0;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmHWM: %lld kB", &kb) == 1) break;
    fclose(f);
    return (int64_t)kb * 1024;
}

void app_metrics_standard(app_metrics *m, tess_ctx *ctx, const char *app, double wall_seconds)
{
    app_metrics_str(m, "app", app);
    app_metrics_int(m, "ranks", tess_nranks(ctx));
    app_metrics_int(m, "workers_per_rank", tess_workers(ctx));
    app_metrics_int(m, "workers_total", tess_workers_total(ctx));
    app_metrics_num(m, "wall_seconds", wall_seconds);
    app_metrics_str(m, "jitter", "none");
    app_metrics_int(m, "seed", 0);
    app_metrics_bool(m, "emulated", 0);
    tess_stats st;
    tess_get_stats(ctx, &st); /* rank 0's view of the message layer */
    app_metrics_int(m, "messages_sent", (int64_t)st.messages_sent);
    app_metrics_int(m, "bytes_sent", (int64_t)st.bytes_sent);
    app_metrics_int(m, "updates_remote", (int64_t)st.updates_remote);
    app_metrics_num(m, "progress_cpu_seconds", st.progress_cpu_seconds);
    app_metrics_int(m, "steals", (int64_t)st.steals);
    app_metrics_int(m, "barriers", (int64_t)st.barriers);
    app_metrics_int(m, "barriers_asked", (int64_t)st.barriers_asked);
    app_metrics_int(m, "replica_bytes_shared", (int64_t)st.replica_bytes_shared);
    tess_checkpoint_stats ck; /* all zero when checkpoints are off */
    tess_checkpoint_get_stats(ctx, &ck);
    app_metrics_int(m, "checkpoints_committed", (int64_t)ck.committed);
    app_metrics_int(m, "checkpoints_failed", (int64_t)ck.failed);
    app_metrics_num(m, "checkpoint_cut_seconds", ck.cut_seconds);
    app_metrics_num(m, "checkpoint_write_seconds", ck.write_seconds);
    app_metrics_int(m, "checkpoint_bytes_written", (int64_t)ck.bytes_written);
    app_metrics_int(m, "checkpoint_log_entries", (int64_t)ck.log_entries);
    app_metrics_num(m, "restore_seconds", ck.restore_seconds);
    int64_t hwm = peak_rss_bytes();
    if (hwm > 0) app_metrics_int(m, "peak_rss_bytes", hwm);
}

static void json_string(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(fp, "\\%c", *p);
        else if (*p == '\n') fputs("\\n", fp);
        else if (*p == '\t') fputs("\\t", fp);
        else if (*p == '\r') fputs("\\r", fp);
        else if (*p < 0x20 || *p == 0x7f) fprintf(fp, "\\u%04x", *p);
        else fputc(*p, fp);
    }
    fputc('"', fp);
}

static void json_number(FILE *fp, double v)
{
    if (isfinite(v)) fprintf(fp, "%.17g", v);
    else fputs("null", fp);
}

static void json_list(FILE *fp, const double *values, int n)
{
    fputc('[', fp);
    for (int i = 0; i < n; i++) {
        if (i > 0) fputs(", ", fp);
        json_number(fp, values[i]);
    }
    fputc(']', fp);
}

/* How an object is laid out: the top level of a --metrics file puts one key
 * on a line, nested objects are on one line, and JSON Lines records have no
 * spaces at all. */
typedef struct json_style {
    const char *open, *sep, *close, *colon;
    const struct json_style *nested;
} json_style;

static const json_style style_compact = {"{", ",", "}", ":", &style_compact};
static const json_style style_inline = {"{", ", ", "}", ": ", &style_inline};
static const json_style style_file = {"{\n  ", ",\n  ", "\n}\n", ": ", &style_inline};

static void json_object(FILE *fp, const app_metrics *m, const json_style *st);

static void json_objects(FILE *fp, const metric *e, const json_style *st)
{
    if (e->is_array) fputc('[', fp);
    for (int i = 0; i < e->nobjects; i++) {
        if (i > 0) fputs(st->sep, fp);
        json_object(fp, e->objects[i], st);
    }
    if (e->is_array) fputc(']', fp);
}

static void json_value(FILE *fp, const metric *e, const json_style *st)
{
    switch (e->kind) {
    case METRIC_STR: json_string(fp, e->str); break;
    case METRIC_NUM: json_number(fp, e->num); break;
    case METRIC_INT: fprintf(fp, "%" PRId64, e->integer); break;
    case METRIC_BOOL: fputs(e->integer ? "true" : "false", fp); break;
    case METRIC_LIST: json_list(fp, e->list, e->list_len); break;
    case METRIC_OBJECTS: json_objects(fp, e, st->nested); break;
    }
}

static void json_object(FILE *fp, const app_metrics *m, const json_style *st)
{
    if (m->count == 0) { /* no blank line inside an empty object */
        fputs(st == &style_file ? "{\n}\n" : "{}", fp);
        return;
    }
    fputs(st->open, fp);
    for (int i = 0; i < m->count; i++) {
        if (i > 0) fputs(st->sep, fp);
        json_string(fp, m->items[i].key);
        fputs(st->colon, fp);
        json_value(fp, &m->items[i], st);
    }
    fputs(st->close, fp);
}

int app_metrics_print(const app_metrics *m, FILE *fp)
{
    if (!m || m->out_of_memory) return -1;
    json_object(fp, m, &style_file);
    return ferror(fp) ? -1 : 0;
}

int app_metrics_append_line(const app_metrics *m, const char *path, const char *who)
{
    if (!m || m->out_of_memory) {
        app_error(who, "cannot append to %s: out of memory", path);
        return -1;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (mem == NULL) {
        app_error(who, "cannot append to %s: out of memory", path);
        return -1;
    }
    json_object(mem, m, &style_compact);
    fputc('\n', mem);
    int failed = ferror(mem) | fclose(mem);
    /* one write of the whole line: an interrupted run leaves at most one bad line */
    FILE *f = failed ? NULL : fopen(path, "a");
    if (f == NULL) {
        app_error(who, "cannot append to %s: %s", path, failed ? "out of memory" : strerror(errno));
        free(buf);
        return -1;
    }
    size_t n = fwrite(buf, 1, len, f);
    free(buf);
    if ((n != len) | fclose(f)) {
        app_error(who, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int app_metrics_write(app_metrics *m, const char *path)
{
    if (!m || m->out_of_memory) {
        fprintf(stderr, "tessera: cannot write %s: out of memory\n", path);
        return -1;
    }
    app_outfile o;
    if (app_outfile_open(&o, path) != 0) return -1;
    app_metrics_print(m, o.fp);
    return app_outfile_commit(&o);
}
