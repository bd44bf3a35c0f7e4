/*
 * common.h — what every application of the `tessera` command shares: an
 * output file that appears only when complete, the metrics JSON writer,
 * progress lines, and option-parsing helpers with one-line errors.
 * Uses only the public headers.
 */
#ifndef TESS_APPS_COMMON_H
#define TESS_APPS_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include "tessera/tessera.h"

/* ---- output files: written to "DIR/.NAME.tmp.PID.XXXXXX", renamed on commit ---- */
typedef struct app_outfile {
    FILE *fp;
    char *path;     /* final path */
    char *tmp_path; /* temporary path in the same directory */
} app_outfile;

/* Open a temporary file next to `path`.  0, or -1 after printing
 * "tessera: cannot write PATH: REASON" on stderr. */
int app_outfile_open(app_outfile *o, const char *path);
/* Whether `path` can be written, without creating anything: not a
 * directory, and its directory exists and is writable.  0, or -1 after the
 * same message as app_outfile_open.  Apps check their outputs at start and
 * open them only to write, so a run killed meanwhile leaves no temporary. */
int app_outfile_check(const char *path);
/* fflush+fsync+fclose, then rename onto the final path.  0 or -1 (message printed,
 * temporary removed). */
int app_outfile_commit(app_outfile *o);
/* Close and remove the temporary; accepts a never-opened (zeroed) struct. */
void app_outfile_abort(app_outfile *o);
/* A run's outputs, all or nothing: when rc is 0, flush and fsync files[i]
 * for every paths[i] given (NULL: not asked for), and only when every one
 * succeeded rename them all into place; if rc is not 0 or a step fails,
 * remove them all.  Returns rc, or -1 when a step failed (message printed). */
int app_outfiles_finish(app_outfile *const *files, const char *const *paths, int n, int rc);
/* Two outputs of one run must not name the same file (the later rename
 * would replace the earlier output): options[i] names the option of
 * paths[i] (NULL: not given).  0, or -1 after "tessera APP: options --A and
 * --B name the same file PATH" (app NULL: silently).  Existing non-regular
 * files (/dev/null) may be shared. */
int app_outputs_distinct(const char *app, const char *const *options, const char *const *paths,
                         int n);
/* No output of a run may be one of its input files: the output's rename
 * at the end would replace the input (`convert g.txt g.txt`, `--input x
 * --output x`).  in_options[i] names the option of in_paths[i], and
 * out_options[j] of out_paths[j] (NULL: not given); existing regular files
 * are compared by device and inode, so other spellings and links count.
 * 0, or -1 after "tessera APP: option --OUT: PATH is the input given to
 * --IN; write the output elsewhere" (app NULL: silently). */
int app_outputs_spare_inputs(const char *app, const char *const *in_options,
                             const char *const *in_paths, int nin, const char *const *out_options,
                             const char *const *out_paths, int nout);
/* The --output and --metrics paths of a run (NULL: not given), checked
 * before the work: 0; -1 after a usage error (both name one file); -2 after
 * an I/O problem (a directory, or in a directory this process cannot
 * write), each with "tessera APP: ..." on stderr. */
int app_check_outputs(const char *app, const char *output, const char *metrics);
/* Create a new temporary "DIR/.BASENAME.tmp.PID.XXXXXX" next to `path`
 * (random suffix, O_EXCL|O_NOFOLLOW: a planted file or symbolic link is
 * never written through) and open it for writing.  The fd, with the
 * malloc'd name in *tmp_out; or -1 with errno set. */
int app_tmpfile_create(const char *path, char **tmp_out);

/* ---- metrics JSON: one object, top-level keys, numbers as numbers ---- */
typedef struct app_metrics app_metrics;
app_metrics *app_metrics_new(void);
void app_metrics_str(app_metrics *m, const char *key, const char *value);
void app_metrics_num(app_metrics *m, const char *key, double value);
void app_metrics_int(app_metrics *m, const char *key, int64_t value);
void app_metrics_bool(app_metrics *m, const char *key, int value);
/* A list of numbers, e.g. iteration_seconds. */
void app_metrics_list(app_metrics *m, const char *key, const double *values, int n);
/* A nested object, or a list of n of them (per_worker); m takes ownership of
 * them (freed at once if a setter failed). */
void app_metrics_object(app_metrics *m, const char *key, app_metrics *object);
void app_metrics_objects(app_metrics *m, const char *key, app_metrics **objects, int n);
/* The keys every app writes: app, ranks, workers_per_rank, workers_total,
 * wall_seconds, jitter ("none"), seed (0), emulated (false). */
void app_metrics_standard(app_metrics *m, tess_ctx *ctx, const char *app, double wall_seconds);
/* Write atomically (app_outfile); 0 or -1 with a message printed. */
int app_metrics_write(app_metrics *m, const char *path);
/* Print the object to fp (for apps that open their --metrics app_outfile early,
 * so an unwritable path fails before the computation).  0, or -1 after a setter
 * ran out of memory or on a write error; prints no message. */
int app_metrics_print(const app_metrics *m, FILE *fp);
/* Append the object to path as one JSON Lines record (compact, one write);
 * 0, or -1 with a message "tessera WHO: cannot ..." printed. */
int app_metrics_append_line(const app_metrics *m, const char *path, const char *who);
void app_metrics_free(app_metrics *m); /* accepts NULL */

/* ---- pictures ---- */
/* Write a PNG of 8-bit pixels, `channels` 1 (gray) or 3 (RGB) per pixel, rows
 * top to bottom, to fp.  0, or -1 (no message). */
int app_png_write(FILE *fp, int width, int height, int channels, const uint8_t *pixels);

/* ---- progress ---- */
typedef enum { APP_PROGRESS_AUTO = 0, APP_PROGRESS_ON, APP_PROGRESS_OFF } app_progress_mode;
/* AUTO: on when stderr is a terminal. */
int app_progress_enabled(app_progress_mode mode);

/* ---- options: each prints "tessera APP: option --NAME: REASON" and returns -1 ----
 * `opt` may be given with or without its leading "--"; text NULL reports a
 * missing value.  The whole text must be the number (no blanks, no suffix). */
int app_parse_int(const char *app, const char *opt, const char *text, long min, long max,
                  long *out);
int app_parse_double(const char *app, const char *opt, const char *text, double min, double max,
                     double *out);
/* One field of a colon-separated list of integers such as --gen P:B:W:H[:SEED]. */
typedef struct app_int_field {
    const char *name;
    long min, max;
} app_int_field;
/* Parse `text` as `required` to `nfields` integers separated by ':' (no empty
 * field), each within its field's range, into out[]; the count given, or -1
 * after "tessera APP: option --OPT: expected FORMAT, got '...'" or the
 * field's range error. */
int app_parse_int_fields(const char *app, const char *opt, const char *format, const char *text,
                         const app_int_field *fields, int nfields, int required, long *out);
/* A command line described by a table, the one option parser of the
 * applications: "--name value", "--name=value" or, for flags, "--name".
 * Each application declares its options as a table of these.  Numbers are
 * range-checked as app_parse_int/double do (APP_OPT_INT stores a long,
 * APP_OPT_INT32 an int); APP_OPT_STRING must not be empty, APP_OPT_TEXT may
 * be; a flag stores flag_value into an int (or calls parse with a NULL
 * value when it has one); APP_OPT_CUSTOM calls parse. */
typedef enum {
    APP_OPT_INT,
    APP_OPT_INT32,
    APP_OPT_DOUBLE,
    APP_OPT_STRING,
    APP_OPT_TEXT,
    APP_OPT_FLAG,
    APP_OPT_CUSTOM
} app_opt_kind;
typedef struct app_opt app_opt;
struct app_opt {
    const char *name; /* without the leading "--" */
    app_opt_kind kind;
    void *dest; /* long *, int *, double *, const char **, int *, or parse's */
    double min, max;
    int flag_value;
    /* Non-NULL: counts the option, which may then be given only once
     * ("option --NAME: given more than once"). */
    int *seen;
    /* APP_OPT_CUSTOM: store `value` into o->dest; 0, or -1 after a one-line
     * error. */
    int (*parse)(const char *app, const app_opt *o, const char *value);
};
/* 0; 1 after printing usage for --help/-h; -1 after a one-line error. */
int app_parse_options(const char *app, const char *usage, int argc, char **argv,
                      const app_opt *opts, int n);
/* APP_OPT_CUSTOM for a path into a const char *: an empty one is as good as
 * missing ("option --NAME: missing value"). */
int app_parse_path(const char *app, const app_opt *o, const char *text);
/* APP_OPT_CUSTOM for a double in the open interval (min, max) (a damping
 * factor): "option --NAME: must be in (MIN, MAX), got 'TEXT'". */
int app_parse_open_interval(const char *app, const app_opt *o, const char *text);
/* app_parse_options with two tables: an application's own options and
 * options it shares with others (tick_cli's, app_ckpt_cli_options,
 * app_run_options), at most APP_OPT_MAX in all; `shared` is searched first. */
#define APP_OPT_MAX 64
int app_parse_options_with(const char *app, const char *usage, int argc, char **argv,
                           const app_opt *own, int n, const app_opt *shared, int m);

/* ---- running a tables-face application (tables_app.c) ---- */

/* The options the tables-face applications take alike. */
typedef struct app_run_opts {
    long workers;        /* --workers: per rank; 0: the runtime's default */
    long partitions;     /* --partitions; 0: the application's default */
    const char *output;  /* --output; NULL: none (or stdout) */
    const char *metrics; /* --metrics; NULL: none */
    int progress;        /* app_progress_mode: --progress, --quiet */
} app_run_opts;
/* Those options as entries of an option table, --partitions in
 * [1, max_partitions], into out (room for APP_RUN_OPTIONS); returns the
 * count. */
#define APP_RUN_OPTIONS 6
int app_run_options(app_run_opts *r, long max_partitions, app_opt *out);
/* A tables-face application's command line: its own options `own` (n), the
 * run options and, with ckpt, the checkpoint options (ckpt_cli.h); --help
 * prints usage, then app_ckpt_cli_usage with ckpt.  0 to run, 1 after
 * --help, -1 after a one-line error. */
typedef struct app_ckpt_cli app_ckpt_cli;
int app_run_parse(const char *app, const char *usage, app_run_opts *run, long max_partitions,
                  app_ckpt_cli *ckpt, const app_opt *own, int n, int argc, char **argv);

/* A failed step of the control function in one line, "tessera APP: WHAT:
 * DETAIL" (the runtime's last error, else the status' name); returns rc. */
int app_control_fail(const char *app, tess_ctx *ctx, const char *what, int rc);
/* m printed to fp (the --metrics file) and freed: 0, or the status after
 * app_control_fail's "writing metrics" line. */
int app_metrics_finish(const char *app, tess_ctx *ctx, app_metrics *m, FILE *fp);

/* tess_config_init, then `workers` (0: the runtime's default). */
void app_config(tess_config *cfg, long workers);
/* A tables-face application as a table of hooks, so that every one of them
 * parses, starts the runtime, maps failures to exit statuses and frees its
 * state alike (app_tables_run). */
typedef struct app_tables_def {
    size_t size; /* of the application's state, zeroed before begin */
    /* Every rank, before the runtime: the command line into the state, what
     * must be ready before tess_init, and the runtime's configuration into
     * cfg (app_config).  0 to run; 1 after --help (exit 0); -1 after a usage
     * error (exit 2); -2 after any other failure (exit 1).  On a failure
     * begin leaves nothing to free. */
    int (*begin)(void *app, int argc, char **argv, tess_config *cfg);
    /* Every rank, after tess_init: the tables, kernels and checkpoints;
     * TESS_OK or the status after rank 0 printed why. */
    int (*prepare)(tess_ctx *ctx, void *app);
    tess_control_fn control;
    /* Every rank, with tess_main's status (or prepare's): what is left to do
     * before tess_finalize (metrics); returns the run's status.  Optional. */
    int (*after)(tess_ctx *ctx, void *app, int rc);
    /* After tess_finalize: free what begin and the run left.  Optional. */
    void (*end)(void *app);
} app_tables_def;
/* The application's main: begin, then tess_init, prepare, tess_main, after,
 * tess_finalize and end; returns the exit status: 0, 1 on a failure, 2 on a
 * usage error, 130 when SIGINT/SIGTERM ended the run. */
int app_tables_run(const app_tables_def *def, int argc, char **argv);

/* Print "tessera APP: FORMAT..." on stderr, newline added. */
void app_error(const char *app, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Entry points called by tools/tessera.c with argv[0] = app name. */
int pagerank_main(int argc, char **argv);
int kmeans_main(int argc, char **argv);
int jacobi_main(int argc, char **argv);
int fish_main(int argc, char **argv);
int pagerank_tick_main(int argc, char **argv);
int blackscholes_main(int argc, char **argv);
int sar_main(int argc, char **argv);
int texture_main(int argc, char **argv);
int nbody_main(int argc, char **argv);
int matmul_main(int argc, char **argv);
int crawl_main(int argc, char **argv);
int serve_web_main(int argc, char **argv);

#endif
