/*
 * bench_util.c — option spelling and the temporary directory of the
 * benchmark drivers (bench_util.h).
 */
#include "bench_util.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common.h"
#include "tessera/tessera.h"

extern char **environ;

int bench_is_option(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

const char *bench_option_value(int argc, char **argv, int *i)
{
    const char *eq = strchr(argv[*i], '=');
    if (eq != NULL) return eq + 1;
    return *i + 1 < argc ? argv[++*i] : NULL;
}

const char *bench_find_mpirun(char *out, size_t len, int check_root)
{
    const char *why = NULL;
    out[0] = '\0';
    if (!tess_have_mpi()) why = "this build has no MPI";
    else if (bench_find_on_path("mpirun", out, len) != 0) why = "mpirun is not on PATH";
    else if (check_root && geteuid() == 0 && getenv("OMPI_ALLOW_RUN_AS_ROOT") == NULL)
        why = "running as root needs OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1";
    if (why != NULL) out[0] = '\0';
    return why;
}

volatile sig_atomic_t bench_interrupted;

static void on_signal(int sig)
{
    (void)sig;
    bench_interrupted = 1;
}

int bench_interruptible(int (*run)(void *), void *arg)
{
    struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    bench_interrupted = 0;
    int rc = run(arg);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    return rc;
}

int bench_mpirun_argv(char **argv, const char *mpirun, const char *np, const char *bind)
{
    const char *pre[] = {mpirun, "-np", np, "--oversubscribe", "--bind-to", bind};
    for (int i = 0; i < 6; i++) argv[i] = (char *)pre[i];
    return 6;
}

int bench_make_tmpdir(char *out, size_t cap, const char *parent, const char *prefix,
                      const char *bench)
{
    if (parent == NULL) parent = getenv("TMPDIR");
    if (parent == NULL || *parent == '\0') parent = "/tmp";
    int n = snprintf(out, cap, "%s/%s-XXXXXX", parent, prefix);
    if (n < 0 || (size_t)n >= cap) {
        app_error(bench, "option --tmpdir: path too long");
        out[0] = '\0';
        return -1;
    }
    if (mkdtemp(out) == NULL) {
        app_error(bench, "cannot create a temporary directory in %s: %s", parent, strerror(errno));
        out[0] = '\0';
        return -1;
    }
    return 0;
}

int bench_find_on_path(const char *name, char *out, size_t len)
{
    const char *path = getenv("PATH");
    while (path != NULL && *path != '\0') {
        size_t n = strcspn(path, ":");
        snprintf(out, len, "%.*s/%s", (int)n, n ? path : ".", name);
        if (access(out, X_OK) == 0) return 0;
        path += n + (path[n] == ':');
    }
    out[0] = '\0';
    return -1;
}

char *bench_read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    size_t cap = 1 << 16, len = 0, n;
    char *buf = malloc(cap);
    while (buf != NULL && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (len + 1 < cap) continue;
        char *bigger = realloc(buf, cap * 2);
        if (bigger == NULL) free(buf);
        buf = bigger;
        cap *= 2;
    }
    fclose(f);
    if (buf != NULL) buf[len] = '\0';
    return buf;
}

void bench_first_line(const char *path, char *out, size_t len)
{
    FILE *f = fopen(path, "r");
    out[0] = '\0';
    if (f == NULL) return;
    if (fgets(out, (int)len, f) != NULL) out[strcspn(out, "\n")] = '\0';
    fclose(f);
}

int bench_run_logged(char **argv, const char *out, const char *err)
{
    pid_t pid;
    int status = 0;
    if (bench_spawn_logged(argv, out, err, &pid) != 0) return -1;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int bench_spawn_logged(char **argv, const char *out, const char *err, pid_t *pid_out)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int rc = posix_spawn(pid_out, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

void bench_put_stamp(app_metrics *o)
{
    char stamp[32], host[128] = "";
    time_t t = time(NULL);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    gethostname(host, sizeof host - 1);
    app_metrics_str(o, "timestamp", stamp);
    app_metrics_str(o, "host", host);
    app_metrics_str(o, "version", tess_version());
}

app_metrics *bench_record_new(const char *bench)
{
    app_metrics *m = app_metrics_new();
    bench_put_stamp(m);
    app_metrics_str(m, "bench", bench);
    return m;
}

int bench_record_write(app_metrics *m, const char *path, const char *who)
{
    int rc = app_metrics_append_line(m, path, who);
    app_metrics_free(m);
    return rc;
}

int bench_run_reported(char **argv, const char *dir, const char *bench, const char *label)
{
    char out[PATH_MAX + 16], err[PATH_MAX + 16], line[400];
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    if (bench_run_logged(argv, out, err) == 0) return 0;
    bench_first_line(err, line, sizeof line);
    app_error(bench, "%s failed: %s", label, line[0] ? line : "(no message)");
    return -1;
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(const double *v, int n)
{
    double small[64];
    double *copy = n <= 64 ? small : malloc((size_t)n * sizeof *copy);
    if (copy == NULL) return v[0];
    memcpy(copy, v, (size_t)n * sizeof *copy);
    qsort(copy, (size_t)n, sizeof *copy, by_double);
    double m = n % 2 ? copy[n / 2] : 0.5 * (copy[n / 2 - 1] + copy[n / 2]);
    if (copy != small) free(copy);
    return m;
}

int bench_median_ci_rank(int n, double *coverage)
{
    /* the interval [x(k), x(n+1-k)] misses the median with probability
     * 2 P(Bin(n, 1/2) < k) */
    double term = ldexp(1.0, -n), below = 0.0;
    int k = 1;
    *coverage = 1.0 - 2.0 * term;
    for (int j = 1; 2 * (j + 1) <= n + 1; j++) {
        below += term;                            /* P(X <= j - 1) */
        term = term * (double)(n - j + 1) / j;    /* P(X = j) */
        double next = 1.0 - 2.0 * (below + term); /* coverage of k = j + 1 */
        if (next < 0.95) break;
        k = j + 1, *coverage = next;
    }
    return k;
}

double bench_median_ci(const double *v, int n, double *lo, double *hi)
{
    double small[64], coverage = 0.0;
    double *x = n <= 64 ? small : malloc((size_t)n * sizeof *x);
    if (x == NULL || n < 1) {
        *lo = *hi = n >= 1 ? v[0] : 0.0;
        return 0.0;
    }
    memcpy(x, v, (size_t)n * sizeof *x);
    qsort(x, (size_t)n, sizeof *x, by_double);
    int k = bench_median_ci_rank(n, &coverage);
    *lo = x[k - 1];
    *hi = x[n - k];
    if (x != small) free(x);
    return coverage;
}

const char *bench_verdict(double median, double lo, double hi, double goal, int lower_better)
{
    if (lower_better ? median <= goal : median >= goal) return "met";
    return lo <= goal && goal <= hi ? "tie" : "MISS";
}

/* Can this process read a forked child's memory with process_vm_readv? */
static int cma_works(void)
{
    static volatile uint64_t probe = 0x7e55e7a;
    FILE *fp = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    if (fp != NULL) { /* above 0, sibling ranks may not read each other */
        int scope = 1;
        if (fscanf(fp, "%d", &scope) != 1) scope = 1;
        fclose(fp);
        if (scope != 0) return 0;
    }
    int fds[2];
    if (pipe(fds) != 0) return 0;
    pid_t child = fork();
    if (child == 0) { /* wait until the parent closes the pipe */
        char b;
        close(fds[1]);
        while (read(fds[0], &b, 1) > 0) {
        }
        _exit(0);
    }
    close(fds[0]);
    uint64_t got = 0;
    struct iovec local = {&got, sizeof got}, remote = {(void *)&probe, sizeof probe};
    ssize_t n = child > 0 ? process_vm_readv(child, &local, 1, &remote, 1, 0) : -1;
    close(fds[1]);
    if (child > 0) waitpid(child, NULL, 0);
    return n == (ssize_t)sizeof got && got == probe;
}

const char *bench_mpi_single_copy(void)
{
    static const char *var = "OMPI_MCA_btl_vader_single_copy_mechanism";
    const char *set = getenv(var);
    if (set != NULL) return set;
    if (cma_works()) return "cma";
    setenv(var, "none", 1);
    return "none";
}

int bench_parse_longs(const char *bench, const char *opt, const char *text, long min, long max,
                      long *out, int cap, int *n_out)
{
    char *copy = strdup(text ? text : ""), *save = NULL;
    int n = 0, rc = copy && text ? 0 : -1;
    for (char *t = strtok_r(copy, ",", &save); rc == 0 && t; t = strtok_r(NULL, ",", &save)) {
        if (n == cap) {
            app_error(bench, "option --%s: at most %d values", opt, cap);
            rc = -2;
        } else rc = app_parse_int(bench, opt, t, min, max, &out[n++]) == 0 ? 0 : -2;
    }
    free(copy);
    if (rc == 0 && n == 0) rc = -1;
    if (rc == -1) app_error(bench, "option --%s: expected a comma-separated list", opt);
    if (rc == 0) *n_out = n;
    return rc == 0 ? 0 : -1;
}

int bench_parse_names(const char *bench, const char *opt, const char *text,
                      const char *const *names, unsigned *out)
{
    unsigned mask = 0;
    for (const char *v = text ? text : ""; *v != '\0';
         v += strcspn(v, ",") + (v[strcspn(v, ",")] == ',')) {
        size_t len = strcspn(v, ",");
        unsigned bit = 0;
        for (int i = 0; names[i] != NULL && bit == 0; i++)
            if (strlen(names[i]) == len && strncmp(v, names[i], len) == 0) bit = 1u << i;
        if (bit == 0) {
            app_error(bench, "option --%s: unknown name '%.*s'", opt, (int)len, v);
            return -1;
        }
        mask |= bit;
    }
    if (mask == 0) app_error(bench, "option --%s: missing value", opt);
    *out = mask;
    return mask ? 0 : -1;
}

int bench_check_appendable(const char *bench, const char *opt, const char *path)
{
    FILE *fp = fopen(path, "a");
    if (fp != NULL && fclose(fp) == 0) return 0;
    app_error(bench, "option --%s: cannot write %s: %s", opt, path, strerror(errno));
    return -1;
}

int bench_parse_appendable(const char *bench, const app_opt *o, const char *text)
{
    if (app_parse_path(bench, o, text) != 0) return -1;
    return bench_check_appendable(bench, o->name, text);
}

/* readlink of /proc/self/exe, NUL-terminated: 0, or -1 with errno set. */
static int read_self_exe(char *out, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", out, len - 1);
    if (n <= 0) return -1;
    out[n] = '\0';
    return 0;
}

int bench_self_exe(const char *bench, char *out, size_t len)
{
    if (read_self_exe(out, len) == 0) return 0;
    app_error(bench, "cannot find this executable (/proc/self/exe): %s", strerror(errno));
    return -1;
}

int bench_sibling(const char *name, char *out, size_t len)
{
    char exe[PATH_MAX];
    if (read_self_exe(exe, sizeof exe) != 0) {
        snprintf(out, len, "%s", name);
        return -1;
    }
    char *slash = strrchr(exe, '/');
    snprintf(out, len, "%.*s/%s", slash ? (int)(slash - exe) : 1, slash ? exe : ".", name);
    return access(out, X_OK) == 0 ? 0 : -1;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0; /* go on: remove what can be removed */
}

void bench_remove_tmpdir(const char *dir)
{
    if (dir && dir[0]) nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static const char *skip_space(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

/* The numbers of the list `"key": [n, n, …]` in a JSON text, into a new array.
 * Tolerant: any whitespace, the key anywhere (first match).  Returns the
 * count, or -1 when the key or a well-formed list of numbers is missing. */
int bench_number_list(const char *at, double *out, int cap)
{
    int n = 0;
    while (at && n < cap) {
        at += strspn(at, "[ ,\n\r\t");
        char *end;
        double x = strtod(at, &end);
        if (end == at) break;
        out[n++] = x;
        at = end;
    }
    return n;
}

int bench_json_numbers(const char *text, const char *key, double **out)
{
    char quoted[128];
    snprintf(quoted, sizeof quoted, "\"%s\"", key);
    const char *p = strstr(text, quoted);
    if (p == NULL) return -1;
    p = skip_space(p + strlen(quoted));
    if (*p++ != ':' || *(p = skip_space(p)) != '[') return -1;
    p = skip_space(p + 1);
    int n = 0, cap = 0;
    double *v = NULL;
    while (*p != ']') {
        char *end;
        double x = strtod(p, &end);
        if (end == p) goto fail;
        if (n == cap) {
            cap = cap ? 2 * cap : 32;
            double *bigger = realloc(v, (size_t)cap * sizeof *v);
            if (bigger == NULL) goto fail;
            v = bigger;
        }
        v[n++] = x;
        p = skip_space(end);
        if (*p == ',') p = skip_space(p + 1);
        else if (*p != ']') goto fail;
    }
    *out = v;
    return n;
fail:
    free(v);
    return -1;
}

int bench_json_number(const char *text, const char *key, double *out)
{
    char quoted[128];
    snprintf(quoted, sizeof quoted, "\"%s\"", key);
    const char *p = strstr(text, quoted);
    if (p == NULL) return -1;
    p = skip_space(p + strlen(quoted));
    if (*p++ != ':') return -1;
    char *end;
    double v = strtod(p, &end);
    if (end == p) return -1;
    *out = v;
    return 0;
}

int bench_run_options(bench_run_opts *r, app_opt *out)
{
    *r = (bench_run_opts){.iterations = 10, .rounds = 3, .workers = 2};
    const app_opt opts[BENCH_RUN_OPTIONS] = {
        {"iterations", APP_OPT_INT, &r->iterations, 1, 100000, 0, NULL, NULL},
        {"rounds", APP_OPT_INT, &r->rounds, 1, 1000, 0, NULL, NULL},
        {"workers", APP_OPT_INT, &r->workers, 1, 1024, 0, NULL, NULL},
        {"json", APP_OPT_CUSTOM, &r->json_path, 0, 0, 0, NULL, bench_parse_appendable},
        {"tmpdir", APP_OPT_CUSTOM, &r->tmp_parent, 0, 0, 0, NULL, app_parse_path},
    };
    memcpy(out, opts, sizeof opts);
    return BENCH_RUN_OPTIONS;
}
