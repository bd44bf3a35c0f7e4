/*
 * bench_ckpt_child.c — one child run of `tessera bench ckpt`: this very
 * binary (/proc/self/exe) as `run APP … --metrics FILE`, optionally under
 * mpirun, with stdout and stderr in the bench's temporary directory; a child
 * that outlives --timeout, or the bench itself, gets SIGTERM then SIGKILL.
 * Also the small file-tree helpers: a checkpoint directory's size, removal.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_ckpt.h"
#include "bench_tick.h"
#include "common.h"
#include "bench_util.h"

#define BC_POLL_NS 20000000L
#define BC_KILL_GRACE_S 5.0

extern char **environ;

int bc_runner_init(bc_runner *r, const bc_options *o)
{
    memset(r, 0, sizeof *r);
    r->timeout_s = o->timeout_s;
    if (bench_self_exe(BC_NAME, r->exe, sizeof r->exe) != 0) return -1;
    if (o->mpirun_np == 0) return 0;
    const char *why = bench_find_mpirun(r->mpirun, sizeof r->mpirun, 0);
    if (why != NULL && !o->dry_run) {
        app_error(BC_NAME, "option --mpirun: %s", why);
        return -1;
    }
    if (why != NULL) snprintf(r->mpirun, sizeof r->mpirun, "mpirun");
    return 0;
}

void bc_print_command(char **argv)
{
    for (int i = 0; argv[i] != NULL; i++) printf("%s%s", i ? " " : "", argv[i]);
    printf("\n");
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_seconds(const struct rusage *ru)
{
    return (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec * 1e-6 +
           (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec * 1e-6;
}

/* Poll the child until it ends; terminate it on timeout or interruption.
 * 0 with *status and its rusage (which covers the ranks mpirun waited
 * for), or -1 (*why says which). */
static int wait_child(pid_t pid, double timeout_s, int *status, struct rusage *ru, const char **why)
{
    double start = now_seconds(), term_at = 0;
    struct timespec pause = {0, BC_POLL_NS};
    for (;;) {
        pid_t w = wait4(pid, status, WNOHANG, ru);
        if (w == pid) return *why == NULL ? 0 : -1;
        if (w < 0 && errno != EINTR) return *why = "lost the child", -1;
        double t = now_seconds();
        if (*why == NULL && (bench_interrupted || t - start > timeout_s)) {
            *why = bench_interrupted ? "interrupted" : "timed out";
            kill(pid, SIGTERM);
            term_at = t;
        } else if (*why != NULL && term_at > 0 && t - term_at > BC_KILL_GRACE_S) {
            kill(pid, SIGKILL);
            term_at = 0;
        }
        nanosleep(&pause, NULL);
    }
}

int bc_run_child(bc_runner *r, char **argv, const char *label, double *cpu_out)
{
    char out[PATH_MAX], err[PATH_MAX];
    snprintf(out, sizeof out, "%s/child.out", r->tmpdir);
    snprintf(err, sizeof err, "%s/child.err", r->tmpdir);
    pid_t pid;
    int status = 0, rc = bench_spawn_logged(argv, out, err, &pid);
    if (rc != 0) {
        app_error(BC_NAME, "cannot start %s: %s", argv[0], strerror(rc));
        return -1;
    }
    const char *why = NULL;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    if (wait_child(pid, r->timeout_s, &status, &ru, &why) == 0 && WIFEXITED(status) &&
        WEXITSTATUS(status) == 0) {
        *cpu_out = cpu_seconds(&ru);
        return 0;
    }
    char line[400];
    bench_first_line(err, line, sizeof line);
    app_error(BC_NAME, "%s run %s (%s %d): %s", label, why ? why : "failed",
              WIFSIGNALED(status) ? "signal" : "exit",
              WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
              line[0] ? line : "(no message)");
    return -1;
}

/* ---------------------------------------------------------------- metrics */

/* Sum and count of the numbers of the list value `v` ("[n, n, …]"); -1 if
 * it is not a list of numbers. */
static int list_sum(const char *v, int skip, double *sum_out)
{
    if (v == NULL || *v++ != '[') return -1;
    int n = 0, seen = 0;
    double sum = 0;
    for (;;) {
        while (*v == ' ' || *v == '\n' || *v == ',') v++;
        if (*v == ']') break;
        char *end;
        double x = strtod(v, &end);
        if (end == v) return -1;
        if (seen++ >= skip) {
            sum += x;
            n++;
        }
        v = end;
    }
    *sum_out = sum;
    return n;
}

static double number_or_nan(const char *text, const char *key)
{
    double x;
    return bt_json_number(text, key, &x) == 0 ? x : NAN;
}

int bc_read_metrics(const char *path, int skip, bc_result *out)
{
    char *text = bench_read_text(path);
    double sum = 0, steady = 0;
    /* n-body calls its iterations steps */
    const char *key =
        text && bt_json_find(text, "step_seconds") ? "step_seconds" : "iteration_seconds";
    int n = text ? list_sum(bt_json_find(text, key), 0, &sum) : -1;
    int ns = text ? list_sum(bt_json_find(text, key), skip, &steady) : -1;
    int rc = n > 0 && bt_json_number(text, "wall_seconds", &out->wall) == 0 &&
                     bt_json_number(text, "load_seconds", &out->load) == 0
                 ? 0
                 : -1;
    if (rc == 0) {
        out->cut_seconds = number_or_nan(text, "checkpoint_cut_seconds");
        out->write_seconds = number_or_nan(text, "checkpoint_write_seconds");
        out->bytes_written = number_or_nan(text, "checkpoint_bytes_written");
        out->checkpoints = number_or_nan(text, "checkpoints_committed");
    }
    free(text);
    if (rc != 0) {
        app_error(BC_NAME, "%s: no iteration_seconds (step_seconds), wall_seconds or load_seconds",
                  path);
        return -1;
    }
    out->iterations = n;
    out->mean_iteration = sum / n;
    out->steady_iteration = ns > 0 ? steady / ns : NAN;
    return 0;
}

/* ---------------------------------------------------------------- files */

typedef void (*tree_fn)(const char *path, const struct stat *st, void *arg);

/* fn(path) for every entry below dir, children before their directory. */
static void walk_tree(const char *dir, tree_fn fn, void *arg)
{
    DIR *d = opendir(dir);
    if (d == NULL) return;
    struct dirent *e;
    char path[PATH_MAX];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) walk_tree(path, fn, arg);
        fn(path, &st, arg);
    }
    closedir(d);
}

static void add_size(const char *path, const struct stat *st, void *arg)
{
    (void)path;
    if (S_ISREG(st->st_mode)) *(uint64_t *)arg += (uint64_t)st->st_size;
}

uint64_t bc_dir_bytes(const char *dir)
{
    uint64_t bytes = 0;
    walk_tree(dir, add_size, &bytes);
    return bytes;
}

static void remove_entry(const char *path, const struct stat *st, void *arg)
{
    (void)arg;
    if (S_ISDIR(st->st_mode)) rmdir(path);
    else unlink(path);
}

void bc_remove_tree(const char *dir)
{
    walk_tree(dir, remove_entry, NULL);
    rmdir(dir);
}
