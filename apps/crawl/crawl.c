/*
 * crawl.c — `tessera run crawl`: a polite web crawler on the tables face
 * (Piccolo §4.5): the setup, the seeds, the crawl and its checkpoints, and
 * the manifest.  By default one long-running kernel instance per partition
 * (crawl_fetch.c) crawls until crawl_term.c finds the crawl over, under
 * CpPeriodic checkpoints every --checkpoint-seconds.  With --rounds the
 * crawl runs in rounds: crawl_fetch.c's round kernel on every partition,
 * then a barrier — a checkpoint barrier every --checkpoint-seconds.
 */
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <libxml/parser.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crawl_app.h"
#include "slurp.h"

void crawl_page_path(const crawl_app *app, crawl_key k, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%016llx%016llx.html", app->pages_dir, (unsigned long long)k.site,
             (unsigned long long)k.url);
}

/* ---------------------------------------------------------------- seeds */

/* One line of fp into buf (at most cap bytes, without its '\n'), NULs and
 * all: fgets would hide what follows a NUL.  Its length; -1 at the end of
 * the file, -2 when the line is longer than cap. */
static long read_line(FILE *fp, char *buf, size_t cap)
{
    size_t n = 0;
    int c;
    while ((c = getc(fp)) != EOF && c != '\n') {
        if (n == cap) return -2;
        buf[n++] = (char)c;
    }
    return c == EOF && n == 0 ? -1 : (long)n;
}

/* buf[0..n) for a message: bytes outside printable ASCII (and '\\') as
 * \xHH, so a seeds file cannot send escape sequences to the terminal;
 * cut after 200 bytes. */
static void printable(const char *buf, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n && i < 200 && o + 8 < cap; i++) {
        unsigned char c = (unsigned char)buf[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') out[o++] = (char)c;
        else o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
    }
    if (n > 200 && o + 4 < cap) memcpy(out + o, "...", 3), o += 3;
    out[o] = '\0';
}

/* A seed is stricter than a link: "scheme://" then a host, no space or
 * control byte ("http:///foo" is refused, where a browser would guess host
 * "foo"; a NUL would hide the rest of the line). */
static int seed_ok(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] == 0x7f) return 0;
    const char *sep = memchr(s, ':', n);
    return sep && (size_t)(sep - s) + 3 < n && strncmp(sep, "://", 3) == 0 &&
           strchr("/\\?#@", sep[3]) == NULL;
}

/* Read the seeds file: every line a URL (blank lines and '#' comments
 * skipped).  Calls fn for each; -1 after "FILE:LINE: ..." on a bad one. */
static int read_seeds(const char *path, int report, int (*fn)(const char *, void *), void *arg)
{
    char why[512];
    FILE *fp = app_fopen_regular(path, why, sizeof why); /* not a FIFO or /dev/zero */
    if (fp == NULL) {
        if (report) app_error(CRAWL_APP, "option --seeds: cannot read %s", why);
        return -1;
    }
    char line[CRAWL_URL_MAX + 1], url[CRAWL_URL_MAX], shown[1024];
    long lineno = 0, count = 0, got;
    int rc = 0;
    while (rc == 0 && (got = read_line(fp, line, CRAWL_URL_MAX)) != -1) {
        lineno++;
        if (got == -2) {
            if (report)
                app_error(CRAWL_APP, "%s:%ld: line longer than %d bytes", path, lineno,
                          CRAWL_URL_MAX);
            rc = -1;
            break;
        }
        size_t n = (size_t)got;
        char *s = line;
        while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t')) n--;
        while (s < line + n && (*s == ' ' || *s == '\t')) s++;
        n -= (size_t)(s - line);
        if (n == 0 || *s == '#') continue;
        s[n] = '\0';
        if (!seed_ok(s, n) || crawl_url_normalize(NULL, s, url, sizeof url, NULL, 0) != 0) {
            printable(s, n, shown, sizeof shown);
            if (report)
                app_error(CRAWL_APP, "%s:%ld: not an http or https URL: '%s'", path, lineno, shown);
            rc = -1;
        } else {
            count++;
            if (fn) rc = fn(url, arg);
        }
    }
    if (rc == 0 && ferror(fp)) {
        if (report) app_error(CRAWL_APP, "%s: read error", path);
        rc = -1;
    }
    fclose(fp);
    if (rc == 0 && count == 0) {
        if (report) app_error(CRAWL_APP, "%s: no URL in the seeds file", path);
        rc = -1;
    }
    return rc;
}

static int put_seed(const char *url, void *arg)
{
    crawl_app *app = arg;
    crawl_key k = crawl_url_key(url);
    int32_t state = CRAWL_TO_FETCH;
    int rc = tess_table_put(app->text, &k, url, strlen(url) + 1);
    if (rc == 0) rc = tess_table_update(app->url, &k, &state, sizeof state);
    return rc;
}

/* ---------------------------------------------------------------- rounds */

static int read_totals(tess_ctx *ctx, crawl_app *app)
{
    memset(app->totals, 0, sizeof app->totals);
    for (int p = 0; p < app->partitions; p++) {
        tess_iter *it = NULL;
        int rc = tess_table_iter(app->counts, p, &it);
        const void *k, *v;
        size_t len;
        while (rc >= 0 && (rc = tess_iter_next(it, &k, &v, &len)) == 1) {
            uint64_t key;
            int64_t value;
            memcpy(&key, k, sizeof key);
            memcpy(&value, v, sizeof value);
            app->totals[key % CRAWL_NCOUNT] += value;
        }
        tess_iter_free(it);
        if (rc < 0) return app_control_fail(CRAWL_APP, ctx, "reading the counters", rc);
    }
    return 0;
}

static void print_progress(const crawl_app *app, int64_t pending, double seconds)
{
    const int64_t *t = app->totals;
    char round[48] = "";
    if (app->opt.rounds) snprintf(round, sizeof round, " round %lld:", (long long)app->rounds);
    fprintf(stderr,
            "crawl:%s %lld pages (%lld ok, %.1f MB), %lld blacklisted, %lld to fetch, "
            "%.1f pages/s\n",
            round, (long long)t[CRAWL_C_FETCHED], (long long)t[CRAWL_C_OK],
            (double)t[CRAWL_C_BYTES] / 1e6, (long long)t[CRAWL_C_BLACKLISTED], (long long)pending,
            seconds > 0 ? (double)(t[CRAWL_C_FETCHED] - app->restored_fetched) / seconds : 0.0);
}

/* One round; *more set to 0 when the crawl is over. */
static int run_round(tess_ctx *ctx, crawl_app *app, double *last_ckpt, int *more)
{
    int64_t before[CRAWL_NCOUNT];
    memcpy(before, app->totals, sizeof before);
    crawl_round_args args = {app->rounds, -1, app->opt.round_seconds};
    if (app->opt.max_pages > 0) args.budget = app->opt.max_pages - app->totals[CRAWL_C_FETCHED];
    int rc = tess_run(ctx, "crawl_round", app->partitions, app->url, &args, sizeof args);
    int ckpt = app->opt.ckpt.dir && tess_now() - *last_ckpt >= app->opt.checkpoint_seconds;
    app->rounds++;
    if (rc == 0 && ckpt) {
        rc = tess_checkpoint_barrier(ctx, &app->rounds, sizeof app->rounds);
        *last_ckpt = tess_now();
    } else if (rc == 0) {
        rc = tess_barrier(ctx);
    }
    if (rc != 0) return app_control_fail(CRAWL_APP, ctx, "crawling", rc);
    if ((rc = read_totals(ctx, app)) != 0) return rc;
    int64_t pending = app->totals[CRAWL_C_PENDING] - before[CRAWL_C_PENDING];
    *more = pending > 0 &&
            (app->opt.max_pages == 0 || app->totals[CRAWL_C_FETCHED] < app->opt.max_pages);
    if (app_progress_enabled(app->opt.run.progress))
        print_progress(app, pending, tess_now() - app->start);
    return 0;
}

/* The long-running crawl: one tess_run until every instance is idle, under
 * periodic checkpoints.  A restored run resumes the instances of the
 * checkpoint (the runtime skips those that had finished). */
static int run_long(tess_ctx *ctx, crawl_app *app)
{
    crawl_run_args args = {-1};
    if (app->opt.max_pages > 0) {
        args.budget = app->opt.max_pages - app->totals[CRAWL_C_FETCHED];
        if (args.budget < 0) args.budget = 0;
    }
    int64_t mark = 0; /* the user data of a checkpoint: no round */
    int ckpt = app->opt.ckpt.dir != NULL;
    int rc =
        ckpt ? tess_checkpoint_periodic(ctx, app->opt.checkpoint_seconds, &mark, sizeof mark) : 0;
    if (rc == 0) rc = tess_run(ctx, "crawl_run", app->partitions, app->url, &args, sizeof args);
    if (rc == 0) rc = tess_barrier(ctx);
    int stop = ckpt ? tess_checkpoint_periodic(ctx, 0, NULL, 0) : 0;
    if (rc == 0) rc = stop;
    if (rc != 0) return app_control_fail(CRAWL_APP, ctx, "crawling", rc);
    return read_totals(ctx, app);
}

/* ---------------------------------------------------------------- manifest */

typedef struct entry {
    crawl_key key;
    int32_t state;
    char *url; /* copies: an iterator's entries last until its next chunk */
    crawl_page_info info;
    int has_info;
    char *reason;
} entry;

typedef struct snap {
    tess_iter *url, *text, *page, *robots;
} snap;

static int entry_cmp_key(const void *a, const void *b)
{
    return crawl_key_cmp(&((const entry *)a)->key, &((const entry *)b)->key);
}

static int entry_cmp_url(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    return strcmp(x->url ? x->url : "", y->url ? y->url : "");
}

/* The first entry not below k in e[0..n), sorted by key. */
static size_t lower_bound(const entry *e, size_t n, crawl_key k)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (crawl_key_cmp(&e[mid].key, &k) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static entry *find_entry(entry *e, size_t n, crawl_key k)
{
    size_t i = lower_bound(e, n, k);
    return i < n && e[i].key.site == k.site && e[i].key.url == k.url ? &e[i] : NULL;
}

static const char *error_name(const entry *e)
{
    if (e->state == CRAWL_BLACKLISTED) return e->reason ? e->reason : "robots.txt";
    if (!e->has_info) return "";
    switch (e->info.error) {
    case CRAWL_ERR_NETWORK: return "network: no response";
    case CRAWL_ERR_TOO_LARGE: return "too-large";
    case CRAWL_ERR_WRITE: return "write-failed";
    case CRAWL_ERR_REFUSED: return "refused: address not allowed";
    default: return "";
    }
}

static void write_entry(FILE *fp, const entry *e)
{
    const char *state = e->state == CRAWL_DONE          ? "done"
                        : e->state == CRAWL_BLACKLISTED ? "blacklisted"
                                                        : "to-fetch";
    char file[64] = "-";
    if (e->state == CRAWL_DONE && e->has_info && e->info.error == CRAWL_OK &&
        e->info.status >= 200 && e->info.status < 300)
        snprintf(file, sizeof file, "pages/%016llx%016llx.html", (unsigned long long)e->key.site,
                 (unsigned long long)e->key.url);
    if (e->has_info && e->state == CRAWL_DONE)
        fprintf(fp, "%s\t%s\t%d\t%lld\t%s\t%s\n", e->url, state, e->info.status,
                (long long)e->info.bytes, file, error_name(e));
    else fprintf(fp, "%s\t%s\t-\t-\t-\t%s\n", e->url, state, error_name(e));
}

/* Partition p's URLs with their text, page and robots records. */
static int gather_partition(crawl_app *app, int p, snap *s, entry **all, size_t *n, size_t *cap)
{
    int rc = tess_table_iter(app->url, p, &s->url);
    if (rc == 0) rc = tess_table_iter(app->text, p, &s->text);
    if (rc == 0) rc = tess_table_iter(app->page, p, &s->page);
    if (rc == 0) rc = tess_table_iter(app->robots, p, &s->robots);
    size_t first = *n;
    const void *k, *v;
    size_t len;
    while (rc >= 0 && (rc = tess_iter_next(s->url, &k, &v, &len)) == 1) {
        if (*n == *cap) {
            *cap = *cap ? 2 * *cap : 1024;
            entry *grown = realloc(*all, *cap * sizeof **all);
            if (grown == NULL) return TESS_ERR_NOMEM;
            *all = grown;
        }
        entry *e = &(*all)[(*n)++];
        memset(e, 0, sizeof *e);
        memcpy(&e->key, k, sizeof e->key);
        memcpy(&e->state, v, sizeof e->state);
    }
    if (rc < 0) return rc;
    entry *part = *all ? *all + first : NULL;
    size_t pn = *n - first;
    if (pn > 1) qsort(part, pn, sizeof *part, entry_cmp_key);
    while (rc >= 0 && (rc = tess_iter_next(s->text, &k, &v, &len)) == 1) {
        entry *e = find_entry(part, pn, *(const crawl_key *)k);
        if (e && len > 0 && ((const char *)v)[len - 1] == '\0') {
            free(e->url);
            if ((e->url = strdup(v)) == NULL) return TESS_ERR_NOMEM;
        }
    }
    while (rc >= 0 && (rc = tess_iter_next(s->page, &k, &v, &len)) == 1) {
        entry *e = find_entry(part, pn, *(const crawl_key *)k);
        if (e && len == sizeof e->info) memcpy(&e->info, v, len), e->has_info = 1;
    }
    while (rc >= 0 && (rc = tess_iter_next(s->robots, &k, &v, &len)) == 1) {
        const char *reason = crawl_robots_reason(v, len);
        crawl_key first_of_site = {.site = *(const uint64_t *)k, .url = 0};
        /* Sorted by site first: the site's URLs are one run (linear, not
         * URLs × sites). */
        for (size_t i = lower_bound(part, pn, first_of_site);
             i < pn && part[i].key.site == first_of_site.site; i++)
            if (part[i].state == CRAWL_BLACKLISTED && reason[0]) { /* else "robots.txt" */
                free(part[i].reason);
                if ((part[i].reason = strdup(reason)) == NULL) return TESS_ERR_NOMEM;
            }
    }
    return rc < 0 ? rc : 0;
}

/* DIR/manifest.tsv: one line per URL met, sorted by URL. */
static int write_manifest(tess_ctx *ctx, crawl_app *app)
{
    snap *snaps = calloc((size_t)app->partitions, sizeof *snaps);
    entry *all = NULL;
    size_t n = 0, cap = 0;
    int rc = snaps ? 0 : TESS_ERR_NOMEM;
    for (int p = 0; rc == 0 && p < app->partitions; p++)
        rc = gather_partition(app, p, &snaps[p], &all, &n, &cap);
    if (rc != 0) rc = app_control_fail(CRAWL_APP, ctx, "collecting the manifest", rc);
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest.tsv", app->opt.run.output);
    if (rc == 0 && app_outfile_open(&app->out_manifest, path) != 0) rc = TESS_ERR_IO;
    if (rc == 0) {
        if (n > 1) qsort(all, n, sizeof *all, entry_cmp_url);
        fputs("# url\tstate\tstatus\tbytes\tfile\tnote\n", app->out_manifest.fp);
        for (size_t i = 0; i < n; i++)
            if (all[i].url) write_entry(app->out_manifest.fp, &all[i]);
    }
    for (int p = 0; snaps && p < app->partitions; p++) {
        tess_iter_free(snaps[p].url), tess_iter_free(snaps[p].text);
        tess_iter_free(snaps[p].page), tess_iter_free(snaps[p].robots);
    }
    free(snaps);
    for (size_t i = 0; i < n; i++) free(all[i].url), free(all[i].reason);
    free(all);
    return rc;
}

/* ---------------------------------------------------------------- metrics and control */

static int write_metrics(tess_ctx *ctx, const crawl_app *app, double crawl_seconds)
{
    app_metrics *m = app_metrics_new();
    const int64_t *t = app->totals;
    int64_t fetched = t[CRAWL_C_FETCHED] - app->restored_fetched;
    app_metrics_standard(m, ctx, CRAWL_APP, tess_now() - app->start);
    app_metrics_int(m, "partitions", app->partitions);
    app_metrics_int(m, "fetchers_per_worker", app->opt.fetchers);
    app_metrics_num(m, "per_site_rate", app->opt.per_site_rate);
    app_metrics_str(m, "mode", app->opt.rounds ? "rounds" : "long-running");
    app_metrics_int(m, "rounds", app->rounds);
    app_metrics_int(m, "pages_fetched", t[CRAWL_C_FETCHED]);
    app_metrics_int(m, "pages_ok", t[CRAWL_C_OK]);
    app_metrics_int(m, "bytes", t[CRAWL_C_BYTES]);
    app_metrics_int(m, "refetched", t[CRAWL_C_REFETCHED]);
    app_metrics_int(m, "blacklisted", t[CRAWL_C_BLACKLISTED]);
    app_metrics_int(m, "robots_fetched", t[CRAWL_C_ROBOTS]);
    app_metrics_num(m, "crawl_seconds", crawl_seconds);
    app_metrics_num(m, "pages_per_second", crawl_seconds > 0 ? fetched / crawl_seconds : 0);
    app_metrics_num(m, "megabytes_per_second",
                    crawl_seconds > 0 ? t[CRAWL_C_BYTES] / 1e6 / crawl_seconds : 0);
    app_ckpt_cli_metrics(m, ctx, &app->opt.ckpt, app->restored_epoch, (long)app->rounds);
    return app_metrics_finish(CRAWL_APP, ctx, m, app->out_metrics.fp);
}

static int start_state(tess_ctx *ctx, crawl_app *app)
{
    int64_t rounds = 0;
    int restored = app_ckpt_cli_restore(CRAWL_APP, ctx, &app->opt.ckpt, NULL, NULL, NULL, &rounds,
                                        sizeof rounds, &app->restored_epoch);
    if (restored < 0) return restored;
    if (restored == 1) {
        app->rounds = rounds;
        int rc = read_totals(ctx, app);
        app->restored_fetched = app->totals[CRAWL_C_FETCHED];
        return rc;
    }
    int rc = read_seeds(app->opt.seeds, 1, put_seed, app);
    if (rc == 0) rc = tess_table_flush(app->url);
    if (rc == 0) rc = tess_table_flush(app->text);
    return rc == 0 ? 0 : app_control_fail(CRAWL_APP, ctx, "seeding", rc < 0 ? rc : TESS_ERR_INVAL);
}

static int crawl_control(tess_ctx *ctx, void *arg)
{
    crawl_app *app = arg;
    int rc = 0;
    if (app->opt.run.metrics && app_outfile_check(app->opt.run.metrics) != 0) rc = TESS_ERR_IO;
    if (rc == 0) rc = start_state(ctx, app);
    double t0 = tess_now(), last_ckpt = t0;
    if (rc == 0 && !app->opt.rounds) rc = run_long(ctx, app);
    for (int more = app->opt.rounds; rc == 0 && more;) rc = run_round(ctx, app, &last_ckpt, &more);
    double seconds = tess_now() - t0;
    if (rc == 0) app_ckpt_cli_finish(CRAWL_APP, ctx, &app->opt.ckpt);
    if (rc == 0) rc = write_manifest(ctx, app);
    if (rc == 0 && app->opt.run.metrics &&
        app_outfile_open(&app->out_metrics, app->opt.run.metrics) != 0)
        rc = TESS_ERR_IO;
    if (rc == 0 && app->out_metrics.fp) rc = write_metrics(ctx, app, seconds);
    if (rc == 0 && app_progress_enabled(app->opt.run.progress)) print_progress(app, 0, seconds);
    app_outfile *files[] = {&app->out_manifest, &app->out_metrics};
    char manifest[4096];
    snprintf(manifest, sizeof manifest, "%s/manifest.tsv", app->opt.run.output);
    const char *paths[] = {manifest, app->opt.run.metrics};
    return app_outfiles_finish(files, paths, 2, rc);
}

/* ---------------------------------------------------------------- setup */

static int make_dir(const char *path, int report)
{
    if (mkdir(path, 0777) == 0 || errno == EEXIST) {
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return 0;
        errno = ENOTDIR;
    }
    if (report)
        app_error(CRAWL_APP, "option --output: cannot create %s: %s", path, strerror(errno));
    return -1;
}

/* DIR and DIR/pages exist; a fresh crawl refuses a directory holding an
 * earlier one (its pages would count as fetched twice). */
static int prepare_output(crawl_app *app, int report)
{
    char manifest[4096];
    if (make_dir(app->opt.run.output, report) != 0) return -1;
    size_t n = strlen(app->opt.run.output) + 8;
    app->pages_dir = malloc(n);
    if (app->pages_dir == NULL) return -1;
    snprintf(app->pages_dir, n, "%s/pages", app->opt.run.output);
    if (make_dir(app->pages_dir, report) != 0) return -1;
    snprintf(manifest, sizeof manifest, "%s/manifest.tsv", app->opt.run.output);
    if (app->opt.ckpt.restore) return 0;
    DIR *d = opendir(app->pages_dir);
    struct dirent *de;
    int used = access(manifest, F_OK) == 0;
    while (d && !used && (de = readdir(d)) != NULL) used = de->d_name[0] != '.';
    if (d) closedir(d);
    if (used && report)
        app_error(CRAWL_APP,
                  "option --output: %s holds an earlier crawl; remove it, or continue that "
                  "crawl with --restore",
                  app->opt.run.output);
    return used ? -1 : 0;
}

/* crawl_term: key p is instance p's status, key `partitions` the probe
 * (crawl_term.c); the crawl_site partitioner puts key p in partition p. */
static int create_term(tess_ctx *ctx, crawl_app *app)
{
    tess_table_spec spec;
    tess_table_spec_init(&spec);
    spec.name = "crawl_term";
    spec.key_size = sizeof(uint64_t);
    spec.value_size = 3 * sizeof(int64_t);
    spec.partitions = app->partitions;
    spec.partitioner = "crawl_site";
    spec.group_with = app->url;
    int rc = tess_table_create(ctx, &spec, &app->term);
    if (rc == 0) rc = tess_register_kernel(ctx, "crawl_run", crawl_run_kernel);
    return rc;
}

/* A long-running instance holds its worker for the whole crawl, and the
 * end needs every instance: each rank must have a worker per partition it
 * holds.  0, or -1 after one line. */
static int check_workers(tess_ctx *ctx, const crawl_app *app, int report)
{
    for (int rank = 0; rank < tess_nranks(ctx); rank++) {
        int held = 0;
        for (int p = 0; p < app->partitions; p++) held += tess_table_owner(app->url, p) == rank;
        if (held <= tess_workers(ctx)) continue;
        if (report)
            app_error(CRAWL_APP,
                      "not supported: rank %d holds %d partitions for %d workers; the "
                      "long-running crawl needs a worker per partition (fewer --partitions, "
                      "more --workers, or --rounds)",
                      rank, held, tess_workers(ctx));
        return -1;
    }
    return 0;
}

static int create_tables(tess_ctx *ctx, crawl_app *app)
{
    struct {
        const char *name;
        size_t key, value;
        tess_accum accum;
        tess_elem elem;
        tess_table **out;
    } specs[] = {
        {"crawl_url", sizeof(crawl_key), sizeof(int32_t), TESS_ACC_MAX, TESS_I32, &app->url},
        {"crawl_text", sizeof(crawl_key), 0, TESS_ACC_REPLACE, TESS_ELEM_NONE, &app->text},
        {"crawl_page", sizeof(crawl_key), sizeof(crawl_page_info), TESS_ACC_REPLACE, TESS_ELEM_NONE,
         &app->page},
        {"crawl_polite", sizeof(uint64_t), sizeof(double), TESS_ACC_REPLACE, TESS_ELEM_NONE,
         &app->polite},
        {"crawl_robots", sizeof(uint64_t), 0, TESS_ACC_REPLACE, TESS_ELEM_NONE, &app->robots},
    };
    int rc = tess_register_partitioner(ctx, "crawl_site", crawl_site_partition);
    for (size_t i = 0; rc == 0 && i < sizeof specs / sizeof specs[0]; i++) {
        tess_table_spec spec;
        tess_table_spec_init(&spec);
        spec.name = specs[i].name;
        spec.key_size = specs[i].key;
        spec.value_size = specs[i].value;
        spec.partitions = app->partitions;
        spec.partitioner = "crawl_site";
        spec.accum = specs[i].accum;
        spec.elem = specs[i].elem;
        spec.group_with = i ? app->url : NULL;
        rc = tess_table_create(ctx, &spec, specs[i].out);
    }
    tess_table_spec spec;
    tess_table_spec_init(&spec);
    spec.name = "crawl_counts";
    spec.key_size = sizeof(uint64_t);
    spec.value_size = sizeof(int64_t);
    spec.partitions = app->partitions;
    spec.dense = 1;
    spec.key_count = (uint64_t)app->partitions * CRAWL_NCOUNT;
    spec.accum = TESS_ACC_SUM;
    spec.elem = TESS_I64;
    spec.group_with = app->url;
    if (rc == 0) rc = tess_table_create(ctx, &spec, &app->counts);
    if (rc == 0) rc = tess_register_kernel(ctx, "crawl_round", crawl_round_kernel);
    if (rc == 0 && !app->opt.rounds) rc = create_term(ctx, app);
    return rc;
}

/* The job's identity for its checkpoints: the seeds. */
static void make_job(const crawl_app *app, char *job, size_t cap)
{
    FILE *fp = fopen(app->opt.seeds, "rb");
    uint64_t h = 0;
    char buf[4096];
    size_t n;
    while (fp && (n = fread(buf, 1, sizeof buf, fp)) > 0) h = app_hash_bytes(h, buf, n);
    if (fp) fclose(fp);
    /* The two modes' checkpoints do not mix (other tables, other user data). */
    snprintf(job, cap, "crawl seeds=%016llx partitions=%d%s", (unsigned long long)h,
             app->partitions, app->opt.rounds ? "" : " long-running");
}

static int prepare(tess_ctx *ctx, void *arg)
{
    crawl_app *app = arg;
    int report = tess_rank(ctx) == 0;
    /* Checked on every rank alike, so a bad file stops them all. */
    if (read_seeds(app->opt.seeds, report, crawl_scope_add_seed, &app->scope) != 0)
        return TESS_ERR_INVAL;
    crawl_scope_finish(&app->scope);
    if (prepare_output(app, report) != 0) return TESS_ERR_IO;
    app->partitions =
        app->opt.run.partitions ? (int)app->opt.run.partitions : tess_workers_total(ctx);
    int rc = create_tables(ctx, app);
    if (rc != 0) {
        if (report) app_control_fail(CRAWL_APP, ctx, "setting up tables", rc);
        return rc;
    }
    if (!app->opt.rounds && check_workers(ctx, app, report) != 0) return TESS_ERR_INVAL;
    char job[128];
    make_job(app, job, sizeof job);
    return app_ckpt_cli_enable(CRAWL_APP, ctx, &app->opt.ckpt, job);
}

/* Both libraries set up their global state once, before any thread. */
static int start_libraries(void)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
        app_error(CRAWL_APP, "libcurl could not be initialised");
        return -2;
    }
    xmlInitParser();
    return 0;
}

static int begin(void *arg, int argc, char **argv, tess_config *cfg)
{
    crawl_app *app = arg;
    app->start = tess_now();
    int rc = crawl_opts_parse(argc, argv, &app->opt);
    if (rc != 0) return rc;
    rc = crawl_scope_init(&app->scope, &app->opt) != 0 ? -1 : start_libraries();
    if (rc != 0) {
        crawl_scope_free(&app->scope);
        return rc;
    }
    app_config(cfg, app->opt.run.workers);
    return 0;
}

static void end(void *arg)
{
    crawl_app *app = arg;
    free(app->pages_dir);
    crawl_scope_free(&app->scope);
    xmlCleanupParser();
    curl_global_cleanup();
}

/* For app_tables_run: the state's size, begin, prepare, control, after, end. */
static const app_tables_def def = {sizeof(crawl_app), begin, prepare, crawl_control, NULL, end};

int crawl_main(int argc, char **argv) { return app_tables_run(&def, argc, argv); }
