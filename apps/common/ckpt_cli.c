/*
 * ckpt_cli.c — checkpoint options and steps shared by the iterative
 * applications (see ckpt_cli.h).  Messages follow the apps' conventions:
 * errors as "tessera APP: ...", progress-like notes as "APP: ...", one line
 * each, printed by rank 0 only.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt_cli.h"

const char app_ckpt_cli_usage[] =
    "  --checkpoint-dir DIR\n"
    "                     take checkpoints in DIR (one directory every rank can\n"
    "                     reach); see docs/supervise.md\n"
    "  --checkpoint-every N\n"
    "                     a checkpoint after every N iterations (of a tick\n"
    "                     application: ticks; default 10)\n"
    "  --restore          resume from the newest checkpoint in DIR, or start afresh\n"
    "                     if there is none (tessera supervise adds it on a restart)\n"
    "  --checkpoint-overwrite\n"
    "                     DIR may hold another job's checkpoints: delete them (by\n"
    "                     default such a DIR is refused and left untouched)\n";

int app_ckpt_cli_parse_every(const char *app, app_ckpt_cli *c, const char *text)
{
    return app_parse_int(app, "checkpoint-every", text, 1, 1000000000L, &c->every);
}

static int parse_every(const char *app, const app_opt *o, const char *text)
{
    return app_ckpt_cli_parse_every(app, o->dest, text);
}

int app_ckpt_cli_options(app_ckpt_cli *c, app_opt *out)
{
    const app_opt opts[APP_CKPT_CLI_OPTIONS] = {
        {"checkpoint-dir", APP_OPT_STRING, &c->dir, 0, 0, 0, NULL, NULL},
        {"checkpoint-every", APP_OPT_CUSTOM, c, 0, 0, 0, NULL, parse_every},
        {"restore", APP_OPT_FLAG, &c->restore, 0, 0, 1, NULL, NULL},
        {"checkpoint-overwrite", APP_OPT_FLAG, &c->overwrite, 0, 0, 1, NULL, NULL},
    };
    memcpy(out, opts, sizeof opts);
    return APP_CKPT_CLI_OPTIONS;
}

int app_ckpt_cli_check(const char *app, app_ckpt_cli *c)
{
    if (c->dir == NULL && c->restore) {
        app_error(app, "option --restore needs --checkpoint-dir DIR");
        return -1;
    }
    if (c->dir == NULL && c->overwrite) {
        app_error(app, "option --checkpoint-overwrite needs --checkpoint-dir DIR");
        return -1;
    }
    if (c->dir == NULL && c->every != 0) {
        app_error(app, "option --checkpoint-every needs --checkpoint-dir DIR");
        return -1;
    }
    if (c->dir != NULL && c->dir[0] == '\0') {
        app_error(app, "option --checkpoint-dir: empty directory name");
        return -1;
    }
    if (c->every == 0) c->every = APP_CKPT_DEFAULT_EVERY;
    return 0;
}

int app_ckpt_cli_due(const app_ckpt_cli *c, long done, long total)
{
    return c->dir != NULL && done < total && done % c->every == 0;
}

int app_ckpt_cli_enable(const char *app, tess_ctx *ctx, const app_ckpt_cli *c, const char *job)
{
    if (c->dir == NULL) return TESS_OK;
    int rc = tess_checkpoint_enable(ctx, c->dir, job, 0);
    if (rc == TESS_OK && c->overwrite) rc = tess_checkpoint_set_overwrite(ctx, 1);
    if (rc != TESS_OK && tess_rank(ctx) == 0)
        app_error(app, "option --checkpoint-dir: %s", tess_last_error(ctx));
    return rc;
}

/* What the application accepts: the size of its user data, the range of
 * its count of work done. */
typedef struct cli_accept {
    const app_ckpt_done *done;
    size_t len;
    const char *app;
} cli_accept;

static int accept_done(const app_ckpt_done *d, const void *user, char *why, size_t whylen)
{
    int64_t done;
    memcpy(&done, user, sizeof done);
    if (done >= 1 && done <= d->total) return 0;
    snprintf(why, whylen, "after %s %lld, beyond --%s %ld", d->unit, (long long)done, d->option,
             d->total);
    return 1;
}

static int accept_sized(void *arg, const void *user, size_t len, uint64_t epoch, char *why,
                        size_t whylen)
{
    const cli_accept *a = arg;
    (void)epoch;
    if (len != a->len)
        return snprintf(why, whylen, "holds %zu bytes of %s state, expected %zu", len, a->app,
                        a->len),
               1;
    return a->done ? accept_done(a->done, user, why, whylen) : 0;
}

int app_ckpt_cli_restore(const char *app, tess_ctx *ctx, const app_ckpt_cli *c,
                         const app_ckpt_done *done, tess_checkpoint_validate_fn validate, void *arg,
                         void *user_out, size_t len, uint64_t *epoch_out)
{
    if (!c->restore) return 0;
    void *user = NULL;
    size_t got = 0;
    uint64_t epoch = 0;
    cli_accept a = {done, len, app};
    int rc =
        tess_checkpoint_restore_checked(ctx, accept_sized, &a, validate, arg, &user, &got, &epoch);
    if (rc == TESS_ERR_NOTFOUND) {
        fprintf(stderr, "%s: no checkpoint in %s; starting afresh\n", app, c->dir);
        return 0;
    }
    if (rc != TESS_OK) {
        app_error(app, "cannot restore from %s: %s", c->dir, tess_last_error(ctx));
        return rc;
    }
    memcpy(user_out, user, len);
    free(user);
    *epoch_out = epoch;
    return 1;
}

void app_ckpt_cli_restored(const char *app, const app_ckpt_cli *c, const char *unit, uint64_t epoch,
                           int64_t done, long total)
{
    fprintf(stderr, "%s: restored checkpoint epoch %llu (%s %lld of %ld) from %s\n", app,
            (unsigned long long)epoch, unit, (long long)done, total, c->dir);
}

int app_ckpt_cli_all_finite(tess_table *t, const char *name, int64_t *count_out, char *why,
                            size_t whylen)
{
    int64_t count = 0;
    int bad = 0;
    for (int p = 0; !bad && p < tess_table_partitions(t); p++) {
        tess_iter *it = NULL;
        if (tess_table_iter(t, p, &it) != TESS_OK)
            return snprintf(why, whylen, "%s: unreadable", name), 1;
        const void *key, *value;
        size_t vlen;
        while (!bad && tess_iter_next(it, &key, &value, &vlen) == 1) {
            for (size_t off = 0; !bad && off + sizeof(double) <= vlen; off += sizeof(double)) {
                double x;
                memcpy(&x, (const char *)value + off, sizeof x);
                bad = !isfinite(x);
            }
            count++;
        }
        tess_iter_free(it);
    }
    if (bad) return snprintf(why, whylen, "%s holds a non-finite value", name), 1;
    if (count_out) *count_out = count;
    return 0;
}

void app_ckpt_cli_finish(const char *app, tess_ctx *ctx, const app_ckpt_cli *c)
{
    if (c->dir == NULL) return;
    uint64_t epoch = 0;
    if (tess_checkpoint_wait(ctx, &epoch) == TESS_OK) return;
    /* The runtime has printed why; say what it means for a restart. */
    if (epoch > 0)
        fprintf(stderr, "%s: a checkpoint failed; a restart would resume from epoch %llu\n", app,
                (unsigned long long)epoch);
    else fprintf(stderr, "%s: a checkpoint failed; %s holds no usable checkpoint\n", app, c->dir);
}

void app_ckpt_cli_metrics(app_metrics *m, const tess_ctx *ctx, const app_ckpt_cli *c,
                          uint64_t restored_epoch, long restored_iteration)
{
    if (c->dir == NULL) return;
    tess_checkpoint_stats st;
    tess_checkpoint_get_stats(ctx, &st);
    app_metrics_int(m, "checkpoint_every", c->every);
    app_metrics_int(m, "restored_epoch", (int64_t)restored_epoch);
    app_metrics_int(m, "restored_iteration", restored_iteration);
    /* the other checkpoint figures are in app_metrics_standard */
    app_metrics_int(m, "checkpoints_started", (int64_t)st.started);
}

static uint64_t mix_word(uint64_t h, uint64_t w)
{
    h ^= w * UINT64_C(0x9E3779B97F4A7C15);
    h = (h << 27) | (h >> 37);
    return h * UINT64_C(0xC2B2AE3D27D4EB4F) + UINT64_C(0x165667B19E3779F9);
}

uint64_t app_hash_bytes(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    size_t n = len;
    for (; n >= 8; n -= 8, p += 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = mix_word(h, w);
    }
    uint64_t tail = 0;
    memcpy(&tail, p, n);
    return mix_word(mix_word(h, tail), (uint64_t)len);
}
