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
/* A command line described by a table: "--name value", "--name=value" or,
 * for flags, "--name".  Numbers are range-checked as app_parse_int/double
 * do; strings must not be empty; a flag stores flag_value into an int. */
typedef enum { APP_OPT_INT, APP_OPT_DOUBLE, APP_OPT_STRING, APP_OPT_FLAG } app_opt_kind;
typedef struct app_opt {
    const char *name; /* without the leading "--" */
    app_opt_kind kind;
    void *dest; /* long *, double *, const char **, int * */
    double min, max;
    int flag_value;
} app_opt;
/* 0; 1 after printing usage for --help/-h; -1 after a one-line error. */
int app_parse_options(const char *app, const char *usage, int argc, char **argv,
                      const app_opt *opts, int n);
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
