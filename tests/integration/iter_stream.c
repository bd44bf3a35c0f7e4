/*
 * iter_stream.c — iterators read a partition in chunks (table.h): over a
 * partition hundreds of chunks long, stored here or (under mpirun) on
 * another rank, of a dense and of a hash table, every key comes exactly
 * once with its value and the iterator never holds much more than one
 * chunk (tess_iter_bytes); then the same while the partition is written
 * between chunks — keys removed, removed and put back, changed, and enough
 * new ones that a hash partition grows several times — checked against the
 * rules in table.h: a key present throughout exactly once, with its old or
 * its new value, any other key at most once — and while a kernel writes it
 * on the owner's side.  Run with TESS_ITER_CHUNK
 * small (iter_stream.sh sets 4096), embedded or under `mpirun -np 2`.
 * With --bench KEYS: the seconds to iterate a partition of KEYS int64
 * values (another rank's under mpirun) and the reader's peak RSS growth
 * meanwhile (also builds against the whole-copy iterator, for comparisons).
 * Prints one line per check and "N passed, N failed".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tessera/tessera.h"

#include "checks.h"

#define PARTS 2

typedef struct app {
    uint64_t keys;                    /* initial keys of each table */
    tess_table *dense, *hash, *hash2; /* hash2: written by a kernel while read */
    uint64_t bench;
} app;

static int64_t value_of(uint64_t k) { return (int64_t)(k * 3 + 1); }
static int64_t changed_of(uint64_t k) { return -(int64_t)k - 7; }

/* A partition of t that is not stored here when there is one. */
static int remote_partition(tess_table *t)
{
    for (int p = 0; p < PARTS; p++)
        if (!tess_table_is_local(t, p)) return p;
    return 0;
}

/* What happens to key k (below 5 * keys) while the partition is read. */
enum { STABLE, REMOVED, BACK, CHANGED, ADDED };

static int fate_of(const app *a, tess_table *t, uint64_t k)
{
    if (k >= a->keys) return t == a->dense ? STABLE : ADDED;
    switch (k % 4) {
    case 1: return REMOVED;
    case 2: return BACK;
    case 3: return CHANGED;
    default: return STABLE;
    }
}

/* Writes to partition p of t, spread over the iteration: op i of n. */
typedef struct writer {
    app *a;
    tess_table *t;
    int p;
    uint64_t next, end; /* keys still to write */
} writer;

static int write_some(writer *w, uint64_t n)
{
    int rc = TESS_OK;
    for (; rc == TESS_OK && n > 0 && w->next < w->end; w->next++) {
        uint64_t k = w->next;
        if (tess_table_partition_of(w->t, &k) != w->p) continue;
        n--;
        int64_t v = changed_of(k);
        switch (fate_of(w->a, w->t, k)) {
        case REMOVED: rc = tess_table_remove(w->t, &k); break;
        case BACK:
            rc = tess_table_remove(w->t, &k);
            if (rc == TESS_OK) rc = tess_table_put(w->t, &k, &(int64_t){value_of(k)}, 8);
            break;
        case CHANGED:
        case ADDED: rc = tess_table_put(w->t, &k, &v, sizeof v); break;
        default: break;
        }
    }
    return rc;
}

/* Who writes while partition p of t is read: nobody, the reader itself
 * (`per` keys every 64 entries), or a kernel running meanwhile (changing
 * and adding keys only). */
enum { QUIET, BETWEEN_CHUNKS, KERNEL };

/* Iterate partition p of t: checks the keys seen against the rules. */
static void check_partition(app *a, tess_table *t, int p, int writes, const char *what)
{
    uint64_t universe = 5 * a->keys;
    uint8_t *seen = calloc(universe, 1);
    uint64_t end = writes != BETWEEN_CHUNKS ? 0 : t == a->dense ? a->keys : universe;
    writer w = {a, t, p, 0, end};
    uint64_t per = a->keys / 50 + 1; /* all written by about a third of the way */
    tess_iter *it = NULL;
    int rc = seen ? tess_table_iter(t, p, &it) : TESS_ERR_NOMEM, twice = 0, wrong = 0;
    size_t most = 0, n = 0;
    const void *key, *value;
    size_t len;
    while (rc == TESS_OK && (rc = tess_iter_next(it, &key, &value, &len)) == 1) {
        rc = TESS_OK;
#ifdef TESS_ITER_CHUNK_DEFAULT /* not in the whole-copy iterator */
        size_t held = tess_iter_bytes(it);
        most = held > most ? held : most;
#endif
        uint64_t k;
        int64_t v;
        memcpy(&k, key, 8);
        memcpy(&v, value, 8);
        if (k >= universe || len != 8 || tess_table_partition_of(t, &k) != p) {
            wrong++;
            continue;
        }
        twice += seen[k]++ > 0;
        int f = fate_of(a, t, k);
        int ok = f == ADDED ? v == changed_of(k)
                            : v == value_of(k) || (f == CHANGED && v == changed_of(k));
        wrong += !ok || (writes == QUIET && k >= a->keys);
        if (++n % 64 == 0 && writes == BETWEEN_CHUNKS) rc = write_some(&w, per);
    }
    tess_iter_free(it);
    uint64_t missing = 0, present_throughout = 0;
    for (uint64_t k = 0; seen && k < a->keys; k++) {
        if (tess_table_partition_of(t, &k) != p) continue;
        int f = fate_of(a, t, k), kept = writes != BETWEEN_CHUNKS || f == STABLE || f == CHANGED;
        present_throughout += kept;
        missing += kept && !seen[k];
    }
    free(seen);
    char line[256];
    snprintf(line, sizeof line,
             "%s: %zu entries, %llu present throughout all seen, none twice, values right, "
             "at most %zu bytes held",
             what, n, (unsigned long long)present_throughout, most);
    /* a chunk passes its budget by at most a probe run of keys */
    const char *env = getenv("TESS_ITER_CHUNK");
    size_t budget = env ? (size_t)atol(env) : 1 << 20;
    check(rc == 0 && missing == 0 && twice == 0 && wrong == 0 && most <= budget + 16 + 64 * 24,
          line);
    if (rc != 0 || missing || twice || wrong)
        printf("      rc %d, missing %llu, twice %d, wrong %d\n", rc, (unsigned long long)missing,
               twice, wrong);
}

static int load(app *a)
{
    int rc = TESS_OK;
    for (uint64_t k = 0; rc == TESS_OK && k < a->keys; k++) {
        int64_t v = value_of(k);
        rc = tess_table_put(a->dense, &k, &v, sizeof v);
        if (rc == TESS_OK) rc = tess_table_put(a->hash, &k, &v, sizeof v);
        if (rc == TESS_OK) rc = tess_table_put(a->hash2, &k, &v, sizeof v);
    }
    return rc;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A line of /proc/self/status in kB ("VmRSS:", "VmHWM:"), -1 when unknown. */
static long status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, field, strlen(field)) == 0) kb = atol(line + strlen(field));
    if (f != NULL) fclose(f);
    return kb;
}

/* Restart the peak (VmHWM) from the current RSS (Linux: clear_refs 5). */
static void reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f != NULL) fputs("5", f), fclose(f);
}

/* Key k of hash2 to its new value when it is one that changes or is added
 * and lies in partition i. */
static int write_key(app *a, int i, uint64_t k)
{
    int f = fate_of(a, a->hash2, k);
    int64_t v = changed_of(k);
    if ((f != CHANGED && f != ADDED) || tess_table_partition_of(a->hash2, &k) != i) return TESS_OK;
    return tess_table_put(a->hash2, &k, &v, sizeof v);
}

/* Instance i changes and adds the keys of partition i of hash2, the added
 * ones among the changed ones, so that the growth overlaps the reads. */
static int k_write(tess_task *task, const void *args, size_t len)
{
    (void)args, (void)len;
    app *a = tess_task_app(task);
    int i = tess_task_instance(task), rc = TESS_OK;
    for (uint64_t j = 0; rc == TESS_OK && j < a->keys; j++) {
        rc = write_key(a, i, j);
        for (uint64_t m = 0; rc == TESS_OK && m < 4; m++) rc = write_key(a, i, a->keys + 4 * j + m);
    }
    return rc;
}

/* --bench: one partition of the dense table, iterated and summed. */
static int bench(tess_ctx *ctx, app *a)
{
    int64_t *v = malloc(a->bench * sizeof *v);
    if (v == NULL) return TESS_ERR_NOMEM;
    for (uint64_t k = 0; k < a->bench; k++) v[k] = value_of(k);
    int rc = tess_table_put_range(a->dense, 0, a->bench, v);
    free(v);
    if (rc == TESS_OK) rc = tess_barrier(ctx);
    int p = remote_partition(a->dense);
    long rss0 = status_kb("VmRSS:");
    reset_peak();
    double t0 = now();
    tess_iter *it = NULL;
    if (rc == TESS_OK) rc = tess_table_iter(a->dense, p, &it);
    const void *key, *value;
    size_t len, n = 0;
    int64_t sum = 0, x;
    while (rc == TESS_OK && (rc = tess_iter_next(it, &key, &value, &len)) == 1) {
        memcpy(&x, value, sizeof x);
        sum += x;
        n++;
        rc = TESS_OK;
    }
    tess_iter_free(it);
    double secs = now() - t0;
    printf("bench: partition %d (%s), %zu entries in %.3f s, reader peak RSS +%ld MB (sum %lld)\n",
           p, tess_table_is_local(a->dense, p) ? "here" : "remote", n, secs,
           (status_kb("VmHWM:") - rss0) / 1024, (long long)sum);
    return rc;
}

/* Until the kernel writing partition p of hash2 has begun (its first
 * changed key changed; 5 s at most), so that the read overlaps its writes. */
static void wait_for_writer(app *a, int p)
{
    uint64_t k = 3;
    while (k < a->keys && tess_table_partition_of(a->hash2, &k) != p) k += 4;
    double until = now() + 5;
    int64_t v = 0;
    while (now() < until && k < a->keys &&
           tess_table_get(a->hash2, &k, &v, sizeof v, NULL) == TESS_OK && v != changed_of(k))
        nanosleep(&(struct timespec){0, 100000}, NULL);
}

static int control(tess_ctx *ctx, void *arg)
{
    app *a = arg;
    if (a->bench) return bench(ctx, a);
    int rc = load(a);
    if (rc == TESS_OK) rc = tess_barrier(ctx);
    if (rc != TESS_OK) return rc;
    int pd = remote_partition(a->dense), ph = remote_partition(a->hash);
    const char *where = tess_table_is_local(a->dense, pd) ? "here" : "remote";
    char what[96];
    snprintf(what, sizeof what, "dense partition %d (%s)", pd, where);
    check_partition(a, a->dense, pd, QUIET, what);
    snprintf(what, sizeof what, "hash partition %d (%s)", ph, where);
    check_partition(a, a->hash, ph, QUIET, what);
    snprintf(what, sizeof what, "dense partition %d (%s) written between chunks", pd, where);
    check_partition(a, a->dense, pd, BETWEEN_CHUNKS, what);
    snprintf(what, sizeof what, "hash partition %d (%s) written and grown between chunks", ph,
             where);
    check_partition(a, a->hash, ph, BETWEEN_CHUNKS, what);
    rc = tess_run(ctx, "write", PARTS, a->hash2, NULL, 0);
    if (rc == TESS_OK) wait_for_writer(a, ph);
    snprintf(what, sizeof what, "hash partition %d (%s) written by a running kernel", ph, where);
    if (rc == TESS_OK) check_partition(a, a->hash2, ph, KERNEL, what);
    return rc == TESS_OK ? tess_barrier(ctx) : rc;
}

static int setup(tess_ctx *ctx, void *arg)
{
    app *a = arg;
    uint64_t count = a->bench ? a->bench : a->keys;
    tess_table_spec s = checks_sum_spec("dense", PARTS, count);
    s.accum = TESS_ACC_REPLACE;
    int rc = tess_table_create(ctx, &s, &a->dense);
    s = checks_sum_spec("hash", PARTS, 0);
    s.accum = TESS_ACC_REPLACE;
    if (rc == TESS_OK) rc = tess_table_create(ctx, &s, &a->hash);
    s.name = "hash2";
    s.group_with = a->hash;
    if (rc == TESS_OK) rc = tess_table_create(ctx, &s, &a->hash2);
    if (rc == TESS_OK) rc = tess_register_kernel(ctx, "write", k_write);
    return rc;
}

/* iter_stream [--workers W] [--keys N] [--bench KEYS] */
int main(int argc, char **argv)
{
    app a = {.keys = checks_arg_count(argc, argv, "--keys", 40000),
             .bench = checks_arg_count(argc, argv, "--bench", 0)};
    tess_config cfg;
    checks_config(argc, argv, &cfg);
    return checks_exit("iter_stream", checks_run(&cfg, setup, control, &a));
}
