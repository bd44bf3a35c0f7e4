/*
 * bench_util.h — what the benchmark drivers share: "--name VALUE" /
 * "--name=VALUE" options, their temporary directory, finding mpirun, and
 * reading what a child run wrote.
 */
#ifndef TESS_BENCH_UTIL_H
#define TESS_BENCH_UTIL_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

/* Is arg the option `name` (as "--name" or "--name=VALUE")? */
int bench_is_option(const char *arg, const char *name);
/* The value of the option at argv[*i]: after '=', else the next argument
 * (advancing *i); NULL when missing. */
const char *bench_option_value(int argc, char **argv, int *i);
/* The full path of executable `name` found on PATH, into out; 0 or -1 (out
 * empty). */
int bench_find_on_path(const char *name, char *out, size_t len);
/* mpirun for a bench's MPI runs: its full path into out and NULL, or why it
 * cannot be used (out empty): "this build has no MPI", "mpirun is not on
 * PATH", or, with check_root, that root needs OpenMPI's permission
 * (OMPI_ALLOW_RUN_AS_ROOT unset). */
const char *bench_find_mpirun(char *out, size_t len, int check_root);
/* "MPIRUN -np NP --oversubscribe --bind-to BIND" into argv (the strings are
 * not copied); returns the count, 6. */
int bench_mpirun_argv(char **argv, const char *mpirun, const char *np, const char *bind);
/* mkdtemp "PARENT/PREFIX-XXXXXX" into out (PARENT: parent, else $TMPDIR,
 * else /tmp).  0, or -1 after "tessera BENCH: ..." on stderr (out empty). */
int bench_make_tmpdir(char *out, size_t cap, const char *parent, const char *prefix,
                      const char *bench);

/* posix_spawn argv[0] (a path) with stdout into `out` and stderr into `err`
 * (created or truncated): 0 with *pid_out, or an errno value. */
int bench_spawn_logged(char **argv, const char *out, const char *err, pid_t *pid_out);
/* The same, waiting for it: 0 when it exited with status 0, else -1. */
int bench_run_logged(char **argv, const char *out, const char *err);
/* The whole file as a NUL-terminated malloc'd string; NULL if it cannot be
 * read. */
char *bench_read_text(const char *path);
/* The first line of a file (no newline) into out; empty if none. */
void bench_first_line(const char *path, char *out, size_t len);

/* argv run with its stdout in DIR/out.txt and stderr in DIR/err.txt: 0 when
 * it exited 0, else -1 after "tessera BENCH: LABEL failed: <its first
 * error line>" on stderr. */
int bench_run_reported(char **argv, const char *dir, const char *bench, const char *label);
/* The numbers of the list `"key": [n, n, ...]` in a JSON text (first match),
 * into a new array *out; the count, or -1 when the key or a well-formed
 * list of numbers is missing. */
int bench_json_numbers(const char *text, const char *key, double **out);
/* The numbers that follow `at` (NULL: none), "0.1 0.2" or "[0.1,0.2]", up
 * to cap of them into out; their count. */
int bench_number_list(const char *at, double *out, int cap);
/* The number of `"key": n` (first match) into *out: 0, or -1 if missing. */
int bench_json_number(const char *text, const char *key, double *out);
/* Median of n >= 1 values (copied; `v` is not reordered). */
double bench_median(const double *v, int n);
/* A distribution-free confidence interval of the median of n values, by
 * order statistics: [x(k), x(n+1-k)] for the largest k whose coverage under
 * the binomial(n, 1/2) is still >= 95% (k = 1, the whole range, when n is
 * too small for that: n < 6 covers less than 95%).  Returns the coverage. */
double bench_median_ci(const double *v, int n, double *lo, double *hi);
/* That k for n values, and the interval's coverage into *coverage. */
int bench_median_ci_rank(int n, double *coverage);
/* The verdict on a per-round ratio whose goal is `<= goal` (lower_better)
 * or `>= goal`: "met" when the median meets it, "tie" when it misses but
 * the median's confidence interval [lo, hi] still contains the goal (the
 * rounds cannot tell the two apart), "MISS" otherwise. */
const char *bench_verdict(double median, double lo, double hi, double goal, int lower_better);
/* "1,2,4": up to cap integers in [min, max] into out, *n_out of them; 0, or
 * -1 after "tessera BENCH: option --OPT: ..." on stderr. */
int bench_parse_longs(const char *bench, const char *opt, const char *text, long min, long max,
                      long *out, int cap, int *n_out);
/* "a,b": names out of the NULL-terminated `names` into a bit mask (bit i
 * for names[i]); 0, or -1 after "tessera BENCH: option --OPT: unknown name
 * 'x'" (or "missing value") on stderr. */
int bench_parse_names(const char *bench, const char *opt, const char *text,
                      const char *const *names, unsigned *out);
/* A results file the bench appends to as it goes, tried before any run
 * (one that cannot be written would lose every result): 0, or -1 after
 * "tessera BENCH: option --OPT: cannot write PATH: REASON" on stderr. */
int bench_check_appendable(const char *bench, const char *opt, const char *path);
/* The path of this executable (/proc/self/exe), the `tessera` a bench runs
 * as its child, into out: 0, or -1 after "tessera BENCH: cannot find this
 * executable (/proc/self/exe): REASON" on stderr. */
int bench_self_exe(const char *bench, char *out, size_t len);
/* The path of executable `name` in the directory of this executable
 * (/proc/self/exe) into out: 0, or -1 if it is not there (out still set). */
int bench_sibling(const char *name, char *out, size_t len);
/* OpenMPI's single-copy transport between ranks of one machine (CMA:
 * process_vm_readv) fails where the container forbids it, so the tests run
 * with it off.  A bench uses it when this machine allows it: unless the
 * caller set OMPI_MCA_btl_vader_single_copy_mechanism, a forked child's
 * memory is read the way a peer rank's would be (no Yama restriction, the
 * call permitted); on failure the variable is set to "none".  Returns the
 * mechanism the bench's MPI runs get ("cma", "none", or the caller's). */
const char *bench_mpi_single_copy(void);
/* Remove dir and everything in it (a bench's temporary directory). */
void bench_remove_tmpdir(const char *dir);

/* Set by SIGINT or SIGTERM while bench_interruptible runs: a bench stops
 * between runs (its children get the signal themselves). */
extern volatile sig_atomic_t bench_interrupted;
/* run(arg) with SIGINT and SIGTERM setting bench_interrupted (cleared
 * first); the previous handlers are restored after.  Returns run's status. */
int bench_interruptible(int (*run)(void *), void *arg);

/* The options of the benches that time tessera against a reference loop
 * (bench kmeans, bench pagerank), alike in meaning, range and default:
 * --iterations (per run, default 10), --rounds (default 3), --workers
 * (default 2), --json FILE, --tmpdir DIR. */
typedef struct bench_run_opts {
    long iterations, rounds, workers;
    const char *json_path, *tmp_parent; /* NULL: not given */
} bench_run_opts;
/* Those options, defaults set, as entries of an option table
 * (app_parse_options_with) into out (room for BENCH_RUN_OPTIONS); returns
 * the count. */
#define BENCH_RUN_OPTIONS 5
typedef struct app_opt app_opt;
int bench_run_options(bench_run_opts *r, app_opt *out);
/* An app_opt parser (APP_OPT_CUSTOM) for such a file: app_parse_path, then
 * bench_check_appendable. */
int bench_parse_appendable(const char *bench, const app_opt *o, const char *text);

/* The keys every bench record starts with: timestamp (UTC, ISO 8601), host
 * and tessera's version. */
typedef struct app_metrics app_metrics;
void bench_put_stamp(app_metrics *o);
/* A new record of bench `bench`: the stamp, then "bench": bench. */
app_metrics *bench_record_new(const char *bench);
/* Append the record m to the JSON Lines file path (a failure reported as
 * `who`'s), then free m: 0, or -1. */
int bench_record_write(app_metrics *m, const char *path, const char *who);

#endif
