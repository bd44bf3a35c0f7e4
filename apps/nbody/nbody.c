/*
 * nbody.c — `tessera run nbody`: short-range n-body (Piccolo §4.3) on the
 * tables face.  The model is in nbody.h, the kernel in nbody_step.c; here
 * are the control function (load, steps, checkpoints, output) and the
 * setup.
 *
 *   state[0], state[1]  hash tables keyed by (cell, writer), values the
 *                       particles of that cell; a registered partitioner
 *                       cuts the box into slabs of planes along x, and
 *                       state[1] is grouped with state[0], so instance p
 *                       reads and writes where partition p lives.
 *
 * Step t runs instance p of the step kernel where partition p of
 * state[t % 2] is; after the barrier that table is cleared.  With
 * --checkpoint-dir a checkpoint barrier follows every --checkpoint-every
 * steps: one table holds the whole state then, and the steps done are the
 * checkpoint's user data.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbody_app.h"
#include "nbody_step.h"

#define NB_LOADER UINT32_MAX            /* the writer of the first state's entries */
#define NBODY_CELLS_PER_PARTICLE 1000.0 /* cells a step may visit per particle */

/* ---------------------------------------------------------------- kernel */

static int nbody_step_kernel(tess_task *task, const void *args, size_t args_len)
{
    nbody_app *app = tess_task_app(task);
    int cur = 0;
    if (args_len != sizeof cur) return TESS_ERR_INVAL;
    memcpy(&cur, args, sizeof cur);
    return nbody_step_instance(tess_task_ctx(task), app->state[cur], app->state[!cur], &app->prm,
                               app->cells, tess_task_instance(task), app->partitions);
}

/* ---------------------------------------------------------------- control */

typedef struct nbody_resume {
    int64_t done; /* steps finished; the state is in state[done % 2] */
} nbody_resume;

/* Every particle of state table t, in table order, into a new array
 * (*n_out of them); TESS_ERR_FORMAT for an entry this program did not write. */
static int gather_particles(const nbody_app *app, tess_table *t, nbody_particle **out,
                            size_t *n_out)
{
    size_t cap = app->n ? app->n : 1, m = 0;
    nbody_particle *all = malloc(cap * sizeof *all);
    int rc = all ? 0 : TESS_ERR_NOMEM;
    for (int p = 0; rc == 0 && p < app->partitions; p++) {
        tess_iter *it = NULL;
        rc = tess_table_iter(t, p, &it);
        const void *key, *value;
        size_t len;
        while (rc == 0 && (rc = tess_iter_next(it, &key, &value, &len)) == 1) {
            size_t count = len / sizeof *all;
            rc = len % sizeof *all == 0 ? 0 : TESS_ERR_FORMAT;
            while (rc == 0 && m + count > cap) {
                nbody_particle *grown = realloc(all, 2 * cap * sizeof *all);
                if (grown == NULL) rc = TESS_ERR_NOMEM;
                else all = grown, cap *= 2;
            }
            if (rc == 0) memcpy(all + m, value, len);
            m += count;
        }
        tess_iter_free(it);
    }
    if (rc != 0) {
        free(all);
        return rc;
    }
    *out = all;
    *n_out = m;
    return 0;
}

/* A loaded epoch's state: every particle once, finite, inside the box. */
static int validate_epoch(tess_ctx *ctx, void *arg, const void *user, size_t len, uint64_t epoch,
                          char *why, size_t whylen)
{
    nbody_app *app = arg;
    nbody_resume r;
    (void)ctx, (void)len, (void)epoch;
    memcpy(&r, user, sizeof r);
    nbody_particle *all = NULL;
    size_t n = 0;
    if (gather_particles(app, app->state[r.done % 2], &all, &n) != 0)
        return snprintf(why, whylen, "its particle table cannot be read"), 1;
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++)
            bad |= !(all[i].x[k] >= 0 && all[i].x[k] < app->prm.box) || !isfinite(all[i].v[k]);
    free(all);
    if (bad) return snprintf(why, whylen, "a particle is not finite or outside the box"), 1;
    if (n != app->n)
        return snprintf(why, whylen, "the state holds %zu particles, the job %zu", n, app->n), 1;
    return 0;
}

/* A bad output path fails before the computation; nothing is created yet. */
static int control_check_outputs(nbody_app *app)
{
    if (app->opt.run.output && app_outfile_check(app->opt.run.output) != 0) return TESS_ERR_IO;
    if (app->opt.run.metrics && app_outfile_check(app->opt.run.metrics) != 0) return TESS_ERR_IO;
    return 0;
}

static int control_open_outputs(nbody_app *app)
{
    if (app->opt.run.output && app_outfile_open(&app->out_particles, app->opt.run.output) != 0)
        return TESS_ERR_IO;
    if (app->opt.run.metrics && app_outfile_open(&app->out_metrics, app->opt.run.metrics) != 0)
        return TESS_ERR_IO;
    return 0;
}

static int control_load(tess_ctx *ctx, nbody_app *app)
{
    double t0 = tess_now();
    int rc = nbody_put_cells(app->state[0], &app->prm, app->cells, NB_LOADER, app->initial, app->n);
    if (rc == 0) rc = tess_table_flush(app->state[0]);
    app->load_seconds += tess_now() - t0;
    return rc == 0 ? 0 : app_control_fail(NB_APP, ctx, "loading particles", rc);
}

static int control_start(tess_ctx *ctx, nbody_app *app)
{
    nbody_resume r;
    uint64_t epoch = 0;
    const app_ckpt_done done = {app->opt.steps, "step", "steps"};
    int restored = app_ckpt_cli_restore(NB_APP, ctx, &app->opt.ckpt, &done, validate_epoch, app, &r,
                                        sizeof r, &epoch);
    int rc = restored < 0 ? restored : 0;
    app->step_seconds = calloc((size_t)app->opt.steps + 1, sizeof(double));
    if (rc == 0 && !app->step_seconds)
        rc = app_control_fail(NB_APP, ctx, "starting", TESS_ERR_NOMEM);
    if (rc == 0) rc = control_check_outputs(app);
    if (rc != 0 || restored != 1) return rc == 0 ? control_load(ctx, app) : rc;
    app->first_step = (long)r.done;
    app->restored_epoch = epoch;
    app_ckpt_cli_restored(NB_APP, &app->opt.ckpt, "step", epoch, r.done, app->opt.steps);
    return 0;
}

static int control_step(tess_ctx *ctx, nbody_app *app, long t)
{
    double t0 = tess_now();
    int cur = (int)(t % 2);
    int rc = tess_run(ctx, "nbody_step", app->partitions, app->state[cur], &cur, sizeof cur);
    if (rc == 0) rc = tess_barrier(ctx);
    if (rc == 0) rc = tess_table_clear(app->state[cur]);
    if (rc == 0 && app_ckpt_cli_due(&app->opt.ckpt, t + 1, app->opt.steps)) {
        nbody_resume r = {.done = t + 1};
        rc = tess_checkpoint_barrier(ctx, &r, sizeof r);
    }
    app->step_seconds[t] = tess_now() - t0;
    if (rc != 0) {
        char what[64];
        snprintf(what, sizeof what, "step %ld", t + 1);
        return app_control_fail(NB_APP, ctx, what, rc);
    }
    if (app_progress_enabled(app->opt.run.progress))
        fprintf(stderr, "nbody: step %ld/%ld: %.3f s\n", t + 1, app->opt.steps,
                app->step_seconds[t]);
    return 0;
}

/* Every particle of the final state, by id; a count that differs from the
 * start is a runtime bug and is never published. */
static int collect_state(tess_ctx *ctx, nbody_app *app, nbody_particle **out)
{
    nbody_particle *all = NULL;
    size_t m = 0;
    int rc = gather_particles(app, app->state[app->opt.steps % 2], &all, &m);
    if (rc == 0 && m != app->n) {
        free(all);
        rc = TESS_ERR_FORMAT;
    }
    if (rc != 0) return app_control_fail(NB_APP, ctx, "collecting the final state", rc);
    nbody_sort_by_id(all, m);
    *out = all;
    return 0;
}

static double momentum_drift(const double a[3], const double b[3])
{
    double d = 0.0;
    for (int k = 0; k < 3; k++) d = fmax(d, fabs(a[k] - b[k]));
    return d;
}

static int write_metrics(tess_ctx *ctx, const nbody_app *app, const double final[3], FILE *fp)
{
    app_metrics *m = app_metrics_new();
    app_metrics_standard(m, ctx, NB_APP, tess_now() - app->start);
    app_metrics_num(m, "load_seconds", app->load_seconds);
    app_metrics_list(m, "step_seconds", app->step_seconds, (int)app->opt.steps);
    app_metrics_int(m, "particles", (int64_t)app->n);
    app_metrics_int(m, "steps", app->opt.steps);
    app_metrics_num(m, "box", app->prm.box);
    app_metrics_num(m, "cutoff", app->prm.cutoff);
    app_metrics_num(m, "dt", app->prm.dt);
    app_metrics_num(m, "softening", app->prm.softening);
    app_metrics_int(m, "cells_per_side", app->cells);
    app_metrics_int(m, "partitions", app->partitions);
    app_metrics_list(m, "momentum_initial", app->momentum_initial, 3);
    app_metrics_list(m, "momentum_final", final, 3);
    app_metrics_num(m, "momentum_drift", momentum_drift(app->momentum_initial, final));
    app_ckpt_cli_metrics(m, ctx, &app->opt.ckpt, app->restored_epoch, app->first_step);
    return app_metrics_finish(NB_APP, ctx, m, fp);
}

static int control_write(tess_ctx *ctx, nbody_app *app)
{
    nbody_particle *all = NULL;
    int rc = collect_state(ctx, app, &all);
    if (rc == 0 && control_open_outputs(app) != 0) {
        free(all);
        return TESS_ERR_IO;
    }
    if (rc != 0) return rc;
    double final[3];
    nbody_momentum(all, app->n, final);
    if (app->out_metrics.fp) rc = write_metrics(ctx, app, final, app->out_metrics.fp);
    FILE *fp = app->out_particles.fp ? app->out_particles.fp : stdout;
    if (rc == 0 && nbody_write(fp, all, app->n) != 0)
        rc = app_control_fail(NB_APP, ctx, "writing particles", TESS_ERR_IO);
    free(all);
    app_outfile *const files[] = {&app->out_particles, &app->out_metrics};
    const char *const paths[] = {app->opt.run.output, app->opt.run.metrics};
    if (rc == 0 && app_outfiles_finish(files, paths, 2, 0) != 0) rc = TESS_ERR_IO;
    if (rc == 0 && !app->out_particles.fp && fflush(stdout) != 0)
        rc = app_control_fail(NB_APP, ctx, "writing particles to stdout", TESS_ERR_IO);
    return rc;
}

static int nbody_control(tess_ctx *ctx, void *arg)
{
    nbody_app *app = arg;
    int rc = control_start(ctx, app);
    for (long t = app->first_step; rc == 0 && t < app->opt.steps; t++)
        rc = control_step(ctx, app, t);
    if (rc == 0) app_ckpt_cli_finish(NB_APP, ctx, &app->opt.ckpt);
    if (rc == 0) rc = control_write(ctx, app);
    if (rc != 0) {
        app_outfile_abort(&app->out_particles);
        app_outfile_abort(&app->out_metrics);
    }
    return rc;
}

/* ---------------------------------------------------------------- setup */

/* Every rank reads or generates the starting state, identically; only rank 0
 * reports and only its control function uses it. */
/* Every step visits every cell: a box of L/R = 1000 cells per side for 50
 * particles took 20 s a step.  More than NBODY_CELLS_PER_PARTICLE cells per
 * particle (and a million in all) is refused, with the box that would do. */
static int check_cell_count(const nbody_app *app, char *err, size_t errlen)
{
    double cells = (double)app->cells * app->cells * app->cells;
    double most = fmax(1e6, NBODY_CELLS_PER_PARTICLE * (double)app->n);
    if (cells <= most) return 0;
    snprintf(err, errlen,
             "options --box %g and --cutoff %g: %.3g cells of side R for %zu particles (at most "
             "%.3g); choose a smaller box or a larger cutoff",
             app->opt.box, app->opt.cutoff, cells, app->n, most);
    return -1;
}

static int prepare_particles(tess_ctx *ctx, nbody_app *app)
{
    char err[512] = "";
    const nbody_opts *o = &app->opt;
    double t0 = tess_now();
    int rc = 0;
    if (o->input) rc = nbody_read(o->input, o->box, &app->initial, &app->n, err, sizeof err);
    else {
        app->n = (size_t)o->particles;
        app->initial = nbody_generate(app->n, o->box, o->vmax, (uint64_t)o->seed);
        if (!app->initial) snprintf(err, sizeof err, "option --particles: out of memory"), rc = -1;
    }
    if (rc == 0) rc = check_cell_count(app, err, sizeof err);
    if (rc != 0 && tess_rank(ctx) == 0) app_error(NB_APP, "%s", err);
    if (rc == 0) nbody_momentum(app->initial, app->n, app->momentum_initial);
    app->load_seconds = tess_now() - t0;
    return rc == 0 ? 0 : TESS_ERR_FORMAT;
}

static int create_state(tess_ctx *ctx, const char *name, int partitions, tess_table *group,
                        tess_table **out)
{
    tess_table_spec spec;
    tess_table_spec_init(&spec);
    spec.name = name;
    spec.key_size = sizeof(nbody_key);
    spec.value_size = 0;
    spec.partitions = partitions;
    spec.partitioner = "nbody_slab";
    spec.group_with = group;
    return tess_table_create(ctx, &spec, out);
}

/* Partitions: --partitions, else 4 per worker; never more than the planes. */
static int choose_partitions(tess_ctx *ctx, nbody_app *app)
{
    long want = app->opt.run.partitions;
    if (want > app->cells) {
        if (tess_rank(ctx) == 0)
            app_error(NB_APP, "option --partitions: %ld is more than the %d planes of cells", want,
                      app->cells);
        return TESS_ERR_INVAL;
    }
    if (want == 0) want = 4L * tess_workers_total(ctx);
    app->partitions = (int)(want < app->cells ? want : app->cells);
    return 0;
}

/* The job a checkpoint belongs to: the starting state and the model. */
static void job_string(const nbody_app *app, char *job, size_t cap)
{
    uint64_t h = app_hash_bytes(0, app->initial, app->n * sizeof *app->initial);
    h = app_hash_bytes(h, &app->prm, sizeof app->prm);
    snprintf(job, cap, "nbody/1 particles=%zu cells=%d model=%016llx", app->n, app->cells,
             (unsigned long long)h);
}

static int prepare_runtime(tess_ctx *ctx, nbody_app *app)
{
    int rc = choose_partitions(ctx, app);
    if (rc != 0) return rc;
    rc = tess_register_partitioner(ctx, "nbody_slab", nbody_partitioner);
    if (rc == 0) rc = create_state(ctx, "state0", app->partitions, NULL, &app->state[0]);
    if (rc == 0) rc = create_state(ctx, "state1", app->partitions, app->state[0], &app->state[1]);
    if (rc == 0) rc = tess_register_kernel(ctx, "nbody_step", nbody_step_kernel);
    if (rc != 0) {
        if (tess_rank(ctx) == 0) app_control_fail(NB_APP, ctx, "setting up tables", rc);
        return rc;
    }
    if (app->opt.ckpt.dir == NULL) return 0;
    char job[128];
    job_string(app, job, sizeof job);
    return app_ckpt_cli_enable(NB_APP, ctx, &app->opt.ckpt, job);
}

static int prepare(tess_ctx *ctx, void *arg)
{
    int rc = prepare_particles(ctx, arg);
    return rc == 0 ? prepare_runtime(ctx, arg) : rc;
}

static int begin(void *arg, int argc, char **argv, tess_config *cfg)
{
    nbody_app *app = arg;
    app->start = tess_now();
    int rc = nbody_opts_parse(argc, argv, &app->opt);
    if (rc != 0) return rc;
    app->prm = (nbody_params){.box = app->opt.box,
                              .cutoff = app->opt.cutoff,
                              .softening = app->opt.softening,
                              .dt = app->opt.dt};
    app->cells = nbody_cells_per_side(&app->prm);
    app_config(cfg, app->opt.run.workers);
    return 0;
}

static void end(void *arg)
{
    nbody_app *app = arg;
    free(app->initial);
    free(app->step_seconds);
}

/* For app_tables_run: the state's size, begin, prepare, control, after, end. */
static const app_tables_def def = {sizeof(nbody_app), begin, prepare, nbody_control, NULL, end};

int nbody_main(int argc, char **argv) { return app_tables_run(&def, argc, argv); }
