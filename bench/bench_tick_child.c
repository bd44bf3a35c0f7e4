/*
 * bench_tick_child.c — one measurement of `tessera bench tick`: this very
 * binary (/proc/self/exe) started with fork/execv as `run APP … --quiet
 * --metrics FILE`, optionally under mpirun, and the figures read back from
 * the metrics JSON it wrote.  A child that runs longer than --timeout is sent
 * SIGTERM (then SIGKILL), as is one still running when the bench is
 * interrupted.
 *
 * TESS_BENCH_TICK_CHILD=PROGRAM replaces the binary (same arguments): the
 * smoke test uses a script that writes a metrics file, so the driver can be
 * checked without running the engine.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "bench_tick.h"
#include "common.h"
#include "bench_util.h"

#define BT_KILL_GRACE_S 5.0
#define BT_POLL_NS 20000000L /* how often the parent looks at its child: 20 ms */

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int find_mpirun(bt_runner *r, const bt_options *o)
{
    const char *why = bench_find_mpirun(r->mpirun, sizeof r->mpirun, 1);
    if (why == NULL) return 0;
    if (o->dry_run) { /* still show the commands */
        snprintf(r->mpirun, sizeof r->mpirun, "mpirun");
        return 0;
    }
    app_error(BT_NAME, "option --mpirun: %s", why);
    return -1;
}

int bt_runner_init(bt_runner *r, const bt_options *o)
{
    memset(r, 0, sizeof *r);
    r->timeout_s = o->timeout_s;
    const char *fake = getenv("TESS_BENCH_TICK_CHILD");
    if (fake != NULL && *fake != '\0') {
        snprintf(r->exe, sizeof r->exe, "%s", fake);
    } else {
        ssize_t n = readlink("/proc/self/exe", r->exe, sizeof r->exe - 1);
        if (n <= 0) {
            app_error(BT_NAME, "cannot find this executable (/proc/self/exe): %s", strerror(errno));
            return -1;
        }
        r->exe[n] = '\0';
    }
    return o->mpirun_np > 0 ? find_mpirun(r, o) : 0;
}

int bt_runner_tmpdir(bt_runner *r, const char *parent)
{
    return bench_make_tmpdir(r->tmpdir, sizeof r->tmpdir, parent, "tessera-bench-tick", BT_NAME);
}

static const char *const tmp_files[] = {"metrics.json", "child.out", "child.err"};

/* The directory holds only the files named above. */
void bt_runner_cleanup(bt_runner *r)
{
    if (r->tmpdir[0] == '\0') return;
    char path[PATH_MAX];
    for (size_t i = 0; i < sizeof tmp_files / sizeof *tmp_files; i++) {
        snprintf(path, sizeof path, "%s/%s", r->tmpdir, tmp_files[i]);
        unlink(path);
    }
    rmdir(r->tmpdir);
    r->tmpdir[0] = '\0';
}

static int is_shell_safe(const char *s)
{
    if (*s == '\0') return 0;
    for (; *s; s++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                    "-_./=:,+@%",
                    *s))
            return 0;
    return 1;
}

void bt_print_command(FILE *out, char **argv)
{
    for (int i = 0; argv[i] != NULL; i++) {
        fputs(i ? " " : "", out);
        if (is_shell_safe(argv[i])) {
            fputs(argv[i], out);
            continue;
        }
        fputc('\'', out);
        for (const char *p = argv[i]; *p; p++)
            if (*p == '\'') fputs("'\\''", out);
            else fputc(*p, out);
        fputc('\'', out);
    }
    fputc('\n', out);
}

/* ----------------------------------------------------------- the child */

/* In the forked child: stdout/stderr to files, then exec; never returns. */
static void exec_child(char **argv, const char *out, const char *err)
{
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGTERM); /* a killed bench leaves no runs behind */
#endif
    int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0) _exit(126);
    close(fo);
    close(fe);
    execv(argv[0], argv);
    fprintf(stderr, "cannot execute %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

typedef enum { CHILD_EXITED, CHILD_TIMED_OUT, CHILD_INTERRUPTED, CHILD_LOST } child_end;

/* Poll until the child ends; terminate it on timeout or interruption. */
static child_end wait_child(pid_t pid, double timeout_s, int *status)
{
    double deadline = now_seconds() + timeout_s, kill_at = 0.0;
    child_end why = CHILD_EXITED;
    for (;;) {
        pid_t w = waitpid(pid, status, WNOHANG);
        if (w == pid) return why;
        if (w < 0 && errno != EINTR) return CHILD_LOST;
        double t = now_seconds();
        if (why == CHILD_EXITED && (bench_interrupted || t > deadline)) {
            why = bench_interrupted ? CHILD_INTERRUPTED : CHILD_TIMED_OUT;
            kill(pid, SIGTERM);
            kill_at = t + BT_KILL_GRACE_S;
        } else if (why != CHILD_EXITED && kill_at > 0.0 && t > kill_at) {
            kill(pid, SIGKILL);
            kill_at = 0.0;
        }
        struct timespec ts = {0, BT_POLL_NS};
        nanosleep(&ts, NULL);
    }
}

static int report_failure(const char *label, child_end why, int status, const char *err,
                          char **argv)
{
    char line[400];
    bench_first_line(err, line, sizeof line);
    if (why == CHILD_INTERRUPTED) app_error(BT_NAME, "%s: interrupted", label);
    else if (why == CHILD_TIMED_OUT)
        app_error(BT_NAME, "%s: no result within --timeout; terminated", label);
    else if (why == CHILD_LOST)
        app_error(BT_NAME, "%s: lost the child process: %s", label, strerror(errno));
    else
        app_error(BT_NAME, "%s: run failed (%s %d): %s", label,
                  WIFEXITED(status) ? "exit" : "signal",
                  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                  line[0] ? line : "(no message)");
    if (why != CHILD_INTERRUPTED) {
        fputs("  command: ", stderr);
        bt_print_command(stderr, argv);
    }
    return -1;
}

static int read_figures(const char *label, const char *path, bt_figures *fig)
{
    char *text = bench_read_text(path);
    if (text == NULL) {
        app_error(BT_NAME, "%s: the run wrote no metrics (%s)", label, path);
        return -1;
    }
    int rc = bt_figures_parse(text, fig);
    free(text);
    if (rc != 0) app_error(BT_NAME, "%s: no ticks_per_second in the metrics the run wrote", label);
    return rc;
}

int bt_measure(bt_runner *r, const bt_series *s, bt_tech t, int round, int jittered,
               bt_figures *fig)
{
    char metrics[PATH_MAX], out[PATH_MAX], err[PATH_MAX], label[160];
    char *argv[BT_ARGV_MAX], bufs[BT_ARGV_BUFS][64];
    snprintf(metrics, sizeof metrics, "%s/%s", r->tmpdir, tmp_files[0]);
    snprintf(out, sizeof out, "%s/%s", r->tmpdir, tmp_files[1]);
    snprintf(err, sizeof err, "%s/%s", r->tmpdir, tmp_files[2]);
    snprintf(label, sizeof label, "%s %s w%ld round %d %s %s", bt_regime_names[s->regime],
             bt_app_names[s->app], s->workers, round + 1, bt_tech_names[t],
             jittered ? s->jitter : "none");
    bt_child_argv(s, t, round, jittered, r->exe, r->mpirun, metrics, argv, bufs);
    unlink(metrics);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        app_error(BT_NAME, "%s: cannot fork: %s", label, strerror(errno));
        return -1;
    }
    if (pid == 0) exec_child(argv, out, err);
    int status = 0;
    child_end why = wait_child(pid, r->timeout_s, &status);
    if (why != CHILD_EXITED || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return report_failure(label, why, status, err, argv);
    if (read_figures(label, metrics, fig) != 0) {
        fputs("  command: ", stderr);
        bt_print_command(stderr, argv);
        return -1;
    }
    return 0;
}
