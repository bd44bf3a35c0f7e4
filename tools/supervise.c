/*
 * supervise.c — `tessera supervise`: run a command (no shell) and, when it
 * fails, run it again with --restore appended so that a checkpointing run
 * resumes where it stopped, a bounded number of times.  SIGINT and SIGTERM
 * are forwarded to the running command and mean "stop": the supervisor then
 * exits with the command's status instead of restarting it.
 *
 * Signals are not caught by a handler: SIGINT, SIGTERM and SIGCHLD stay
 * blocked in the supervisor and are taken one at a time with sigwaitinfo(),
 * so there is no window in which a signal could arrive before the child's
 * pid is known, and no process-global state.  The child gets the original
 * signal mask back before exec.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_MAX_RESTARTS 3
/* Back-off between restarts: none after a run that lasted RESET_SECONDS
 * (a crash after real work), else FIRST_DELAY doubling up to MAX_DELAY (a
 * command that fails at once is not restarted hundreds of times a second). */
#define RESET_SECONDS 30.0
#define FIRST_DELAY 0.25
#define MAX_DELAY 30.0
#define EXIT_USAGE 2
#define EXIT_CANNOT_RUN 127

typedef struct supervisor {
    char **argv; /* the command line of the next run; owned */
    int max_restarts;
    sigset_t waited;   /* SIGINT, SIGTERM, SIGCHLD: blocked, taken by sigwaitinfo */
    sigset_t original; /* the mask to give back to the child */
    int stop_signal;   /* the operator's signal we forwarded, or 0 */
} supervisor;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tessera supervise [--max-restarts K] -- COMMAND ARGS...\n"
            "\n"
            "Run COMMAND directly (no shell).  When it fails (non-zero exit or killed\n"
            "by a signal), run it again with --restore appended to its arguments, at\n"
            "most K times in total (default %d; 0 runs it once).  SIGINT and SIGTERM\n"
            "are forwarded to COMMAND and stop supervision: no restart follows.\n"
            "\n"
            "Exit status: 0 as soon as a run succeeds; otherwise the last run's exit\n"
            "status (128+S if it was killed by signal S); 2 for bad usage; 127 if\n"
            "COMMAND cannot be run.\n",
            DEFAULT_MAX_RESTARTS);
}

static int usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "tessera supervise: %s%s%s%s (see tessera supervise --help)\n", what,
            arg ? " '" : "", arg ? arg : "", arg ? "'" : "");
    return EXIT_USAGE;
}

/* Only plain decimal digits: strtol would also take "-1", " 3" and "+3". */
static int parse_count(const char *s, int *out)
{
    long v = 0;
    if (*s == '\0') return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return -1;
        v = v * 10 + (*s - '0');
        if (v > INT_MAX) return -1;
    }
    *out = (int)v;
    return 0;
}

/* Parses the options before "--"; sets *command_out to the index of COMMAND.
 * Returns -1 to go on, or the exit status when the command line is done with. */
static int parse_options(int argc, char **argv, int *max_restarts_out, int *command_out)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *value = NULL;
        if (strcmp(a, "--") == 0) {
            if (i + 1 >= argc) return usage_error("missing COMMAND after '--'", NULL);
            *command_out = i + 1;
            return -1;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strncmp(a, "--max-restarts=", 15) == 0) value = a + 15;
        else if (strcmp(a, "--max-restarts") == 0) {
            if (i + 1 >= argc) return usage_error("--max-restarts needs a value", NULL);
            value = argv[++i];
        } else if (a[0] == '-') return usage_error("unknown option", a);
        else return usage_error("missing '--' before COMMAND", a);
        if (parse_count(value, max_restarts_out) != 0)
            return usage_error("--max-restarts wants a whole number >= 0, not", value);
    }
    return usage_error("missing '--' and COMMAND", NULL);
}

/* A copy of argv[0..argc) with room for one more argument and the NULL. */
static char **copy_command(int argc, char **argv)
{
    char **copy = calloc((size_t)argc + 2, sizeof *copy);
    if (copy == NULL) return NULL;
    memcpy(copy, argv, (size_t)argc * sizeof *copy);
    return copy;
}

/* Appends --restore unless the command line already ends with it; the array
 * was allocated with room for it. */
static void append_restore(char **argv)
{
    size_t n = 0;
    while (argv[n] != NULL) n++;
    if (n > 0 && strcmp(argv[n - 1], "--restore") == 0) return;
    argv[n] = "--restore";
    argv[n + 1] = NULL;
}

/* In the child: exec, or report errno through the close-on-exec pipe. */
static void exec_child(const supervisor *s, int report_fd)
{
    sigprocmask(SIG_SETMASK, &s->original, NULL);
    execvp(s->argv[0], s->argv);
    int err = errno;
    ssize_t w = write(report_fd, &err, sizeof err);
    (void)w;
    _exit(EXIT_CANNOT_RUN);
}

/* Starts the command; returns its pid, or -1 after reporting why it could
 * not be run (the child, if any, is reaped). */
static pid_t start_child(const supervisor *s)
{
    int fds[2], err = 0;
    if (pipe2(fds, O_CLOEXEC) != 0) {
        err = errno;
        goto report;
    }
    pid_t pid = fork();
    if (pid == 0) exec_child(s, fds[1]);
    if (pid < 0) err = errno;
    close(fds[1]);
    /* The write end closes at exec: a read of 0 bytes means exec succeeded. */
    while (pid > 0 && read(fds[0], &err, sizeof err) < 0 && errno == EINTR) {
    }
    close(fds[0]);
    if (err == 0) return pid;
    if (pid > 0) waitpid(pid, NULL, 0);
report:
    fprintf(stderr, "tessera supervise: cannot run %s: %s\n", s->argv[0], strerror(err));
    return -1;
}

/* Waits for the child, forwarding the operator's signals; returns its wait status. */
static int wait_child(supervisor *s, pid_t pid)
{
    for (;;) {
        int status;
        int sig = sigwaitinfo(&s->waited, NULL);
        if (sig < 0) continue; /* EINTR from an unrelated, handled signal */
        if (sig != SIGCHLD) {
            s->stop_signal = sig;
            kill(pid, sig);
            continue;
        }
        /* SIGCHLD may be left over from an earlier run; only our pid counts. */
        if (waitpid(pid, &status, WNOHANG) == pid) return status;
    }
}

/* Records an operator's signal that arrived while no child was running. */
static void take_pending_stop(supervisor *s)
{
    sigset_t stop;
    struct timespec now = {0, 0};
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    int sig = sigtimedwait(&stop, NULL, &now);
    if (sig > 0) s->stop_signal = sig;
}

static int exit_code(int status)
{
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 1;
}

static void report_restart(const supervisor *s, int status, int restart, double delay)
{
    fprintf(stderr, "tessera supervise: %s ", s->argv[0]);
    if (WIFSIGNALED(status)) fprintf(stderr, "was killed by signal %d", WTERMSIG(status));
    else fprintf(stderr, "exited with status %d", exit_code(status));
    fprintf(stderr, "; restart %d/%d with --restore", restart, s->max_restarts);
    if (delay > 0) fprintf(stderr, " in %.2g s", delay);
    fputc('\n', stderr);
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Sleep `seconds` unless the operator's SIGINT/SIGTERM comes first (then
 * recorded as the stop signal). */
static void back_off(supervisor *s, double seconds)
{
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    double until = now_seconds() + seconds;
    for (double left = seconds; left > 0 && s->stop_signal == 0; left = until - now_seconds()) {
        struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        int sig = sigtimedwait(&stop, NULL, &ts);
        if (sig > 0) s->stop_signal = sig;
    }
}

/* The delay before the next run: none after a long run, else doubling. */
static double next_delay(double delay, double ran_seconds)
{
    if (ran_seconds >= RESET_SECONDS) return 0;
    if (delay <= 0) return FIRST_DELAY;
    return delay * 2 < MAX_DELAY ? delay * 2 : MAX_DELAY;
}

static int supervise(supervisor *s)
{
    double delay = 0;
    for (int restart = 0;; restart++) {
        double started = now_seconds();
        pid_t pid = start_child(s);
        if (pid < 0) return EXIT_CANNOT_RUN;
        int status = wait_child(s, pid);
        if (status == 0) return 0;
        take_pending_stop(s);
        if (s->stop_signal != 0 || restart == s->max_restarts) return exit_code(status);
        delay = restart == 0 ? 0 : next_delay(delay, now_seconds() - started);
        report_restart(s, status, restart + 1, delay);
        back_off(s, delay);
        if (s->stop_signal != 0) return exit_code(status);
        append_restore(s->argv);
    }
}

/* An empty handler: SIGCHLD's default action is to discard it, and a
 * discarded signal could not be waited for. */
static void on_sigchld(int sig) { (void)sig; }

static void block_signals(supervisor *s)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigchld;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, NULL);
    sigemptyset(&s->waited);
    sigaddset(&s->waited, SIGINT);
    sigaddset(&s->waited, SIGTERM);
    sigaddset(&s->waited, SIGCHLD);
    sigprocmask(SIG_BLOCK, &s->waited, &s->original);
}

int supervise_main(int argc, char **argv)
{
    supervisor s = {.max_restarts = DEFAULT_MAX_RESTARTS};
    int command = 0;
    int rc = parse_options(argc, argv, &s.max_restarts, &command);
    if (rc >= 0) return rc;
    s.argv = copy_command(argc - command, argv + command);
    if (s.argv == NULL) {
        fprintf(stderr, "tessera supervise: out of memory\n");
        return 1;
    }
    /* The signals stay blocked until exit: a late SIGTERM must not replace
     * the status we are about to return. */
    block_signals(&s);
    rc = supervise(&s);
    free(s.argv);
    return rc;
}
