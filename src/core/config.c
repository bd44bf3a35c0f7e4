/*
 * config.c — defaults, the environment, and how this process was launched.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

int tess__usable_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* TESS_FLUSH_MS: the timeout flush in milliseconds, 0 to turn it off. */
static void config_flush_ms(tess_config *cfg)
{
    const char *s = getenv("TESS_FLUSH_MS");
    if (s == NULL) return;
    char *end = NULL;
    double ms = strtod(s, &end);
    if (end != s && *end == '\0' && ms >= 0 && ms <= 3.6e6) cfg->flush_ms = ms;
    else
        fprintf(stderr,
                "tessera: TESS_FLUSH_MS: expected milliseconds in [0, 3600000], got '%s' "
                "(ignored)\n",
                s);
}

void tess_config_init(tess_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->mode = TESS_MODE_AUTO;
    cfg->barrier_warn_seconds = 10.0;
    cfg->handle_signals = 1;
    const char *w = getenv("TESS_WORKERS");
    long n = 0;
    if (w != NULL) { /* the whole value a count in [1, 4096], or ignored and said so */
        if (tess__parse_count(w, 1, 4096, &n)) cfg->workers = (int)n;
        else
            fprintf(stderr,
                    "tessera: TESS_WORKERS: expected a worker count in [1, 4096], got '%s' "
                    "(ignored)\n",
                    w);
    }
    const char *v = getenv("TESS_VERBOSE");
    if (v != NULL && strcmp(v, "1") == 0) cfg->verbose = 1;
    cfg->steal = 1;
    cfg->slow_rank = -1;
    cfg->slow_factor = 1.0;
    const char *s = getenv("TESS_STEAL");
    if (s != NULL && strcmp(s, "0") == 0) cfg->steal = 0;
    else if (s != NULL && strcmp(s, "1") != 0)
        fprintf(stderr, "tessera: TESS_STEAL: expected 0 or 1, got '%s' (ignored: stealing on)\n",
                s);
    cfg->flush_ms = TESS_FLUSH_MS_DEFAULT;
    config_flush_ms(cfg);
    s = getenv("TESS_SLOW_WORKER");
    if (s != NULL &&
        tess_parse_slow_worker(s, &cfg->slow_rank, &cfg->slow_factor, &cfg->slow_sleep) != TESS_OK)
        fprintf(stderr,
                "tessera: TESS_SLOW_WORKER: expected RANK:FACTOR[:spin|:sleep], got '%s' "
                "(ignored)\n",
                s);
}

/* "" or ":spin" -> 0, ":sleep" -> 1, anything else -> -1. */
static int slow_mode(const char *s)
{
    if (*s == '\0' || strcmp(s, ":spin") == 0) return 0;
    return strcmp(s, ":sleep") == 0 ? 1 : -1;
}

int tess_parse_slow_worker(const char *spec, int *rank_out, double *factor_out, int *sleep_out)
{
    if (spec == NULL) return TESS_ERR_INVAL;
    char *end = NULL;
    long rank = strtol(spec, &end, 10);
    if (end == spec || *end != ':' || rank < 0 || rank > 1000000) return TESS_ERR_INVAL;
    const char *f = end + 1;
    double factor = strtod(f, &end);
    int sleep = slow_mode(end);
    if (end == f || sleep < 0 || !(factor >= 1.0 && factor <= 1000.0)) return TESS_ERR_INVAL;
    *rank_out = (int)rank;
    *factor_out = factor;
    *sleep_out = sleep;
    return TESS_OK;
}

int tess__default_workers(void) { return tess__usable_cores(); }

/* Ranks of this job on this node, as the launcher says; 1 outside MPI. */
static long local_ranks(void)
{
    const char *v = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (v == NULL) v = getenv("MPI_LOCALNRANKS");
    long n = v ? strtol(v, NULL, 10) : 1;
    return n > 0 ? n : 1;
}

int tess__parse_count(const char *s, long lo, long hi, long *out)
{
    char *end = NULL;
    errno = 0;
    long n = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno != 0 || n < lo || n > hi) return 0;
    *out = n;
    return 1;
}

/* Did the launcher bind this process to fewer cores than the machine has? */
static int bound_by_launcher(void)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 && tess__usable_cores() < online;
}

int tess__rank_cores(void)
{
    int usable = tess__usable_cores();
    if (bound_by_launcher()) return usable; /* its own */
    long share = usable / local_ranks();
    return share > 0 ? (int)share : 0;
}

int tess__rank_owns_cores(void) { return bound_by_launcher() || local_ranks() == 1; }

int tess__nth_usable_cpu(int k)
{
    cpu_set_t set;
    if (k < 0 || sched_getaffinity(0, sizeof set, &set) != 0) return -1;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &set) && k-- == 0) return cpu;
    return -1;
}

/* Launchers export their rank in the environment: OpenMPI, PMIx, Hydra/PMI, Slurm's srun. */
int tess__launched_by_mpi(void)
{
    static const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE",
                                 "MPI_LOCALNRANKS",      NULL};
    for (int i = 0; vars[i] != NULL; i++)
        if (getenv(vars[i]) != NULL) return 1;
    /* srun sets a step id; an sbatch script alone does not start ranks */
    return getenv("SLURM_STEP_ID") != NULL && getenv("SLURM_PROCID") != NULL;
}
