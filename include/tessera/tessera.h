/*
 * tessera.h — the core API of tessera: context lifecycle, registry, kernels,
 * control function and barriers.  If it is not in include/tessera/, it is not
 * a published API.
 *
 * Lifecycle (same on every rank, SPMD):
 *   tess_config_init() -> tess_init() -> tess_register_*() / tess_table_create()
 *   -> tess_main(control) -> tess_finalize().
 * Registration and table creation must happen identically on every rank, in
 * the same order, before tess_main(); afterwards registration returns
 * TESS_ERR_MISUSE, and tables are created (and dropped) only by the control
 * function between barriers, which makes them on every rank (table.h).
 *
 * Threads: unless stated otherwise a function may be called from the thread
 * that called tess_init() (the "main thread") and, during tess_main(), from
 * kernel instances running on worker threads.
 */
#ifndef TESSERA_TESSERA_H
#define TESSERA_TESSERA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 0.4: a pointer from tess_iter_next() is valid until the next call (it was
 * until tess_iter_free()): iterators now read a partition a chunk at a
 * time (table.h).
 * 0.5: tess_tick_app has a new last member, ix (optional; tick.h), so a
 * program built against 0.4 must be rebuilt. */
#define TESS_VERSION_MAJOR 0
#define TESS_VERSION_MINOR 5
#define TESS_VERSION_PATCH 0
#define TESS_VERSION_STRING "0.5.0"
#define TESS_VERSION_NUMBER \
    (TESS_VERSION_MAJOR * 10000 + TESS_VERSION_MINOR * 100 + TESS_VERSION_PATCH)

#if defined(__GNUC__)
#define TESS_API __attribute__((visibility("default")))
#else
#define TESS_API
#endif

/* One status type: 0 is success, negative is an error. */
typedef enum tess_status {
    TESS_OK = 0,
    TESS_ERR_INVAL = -1,       /* bad argument or option */
    TESS_ERR_NOMEM = -2,       /* out of memory */
    TESS_ERR_IO = -3,          /* a file could not be read or written */
    TESS_ERR_FORMAT = -4,      /* malformed input */
    TESS_ERR_NOTFOUND = -5,    /* no such key, name or file */
    TESS_ERR_MISUSE = -6,      /* call out of lifecycle order or from the wrong thread */
    TESS_ERR_MPI = -7,         /* the MPI library reported an error */
    TESS_ERR_INTERRUPTED = -8, /* SIGINT/SIGTERM or another rank aborted */
    TESS_ERR_TIMEOUT = -9,     /* a wait exceeded its limit */
    TESS_ERR_KERNEL = -10,     /* a kernel instance returned an error */
    TESS_ERR_UNSUPPORTED = -11 /* not available in this build */
} tess_status;

/* Name of a status code; static storage, never NULL. */
TESS_API const char *tess_strerror(int status);

/* Library version at run time, e.g. "0.1.0"; compare with TESS_VERSION_STRING. */
TESS_API const char *tess_version(void);
/* TESS_VERSION_NUMBER of the library actually loaded. */
TESS_API int tess_version_number(void);
/* 1 when the library was built with MPI support, 0 for embedded-only builds. */
TESS_API int tess_have_mpi(void);

typedef enum tess_mode {
    TESS_MODE_AUTO = 0,     /* MPI when started by mpirun/srun, embedded otherwise */
    TESS_MODE_EMBEDDED = 1, /* one process, worker threads, MPI never initialised */
    TESS_MODE_MPI = 2       /* require MPI; fails with TESS_ERR_UNSUPPORTED without it */
} tess_mode;

/* The default of tess_config.flush_ms. */
#define TESS_FLUSH_MS_DEFAULT 5.0

typedef struct tess_config {
    int workers;    /* worker threads per rank; 0 = cores this rank may use */
    tess_mode mode; /* default TESS_MODE_AUTO */
    double
        barrier_warn_seconds; /* a barrier waiting longer reports whom it waits for; default 10 */
    int handle_signals;       /* SIGINT/SIGTERM set tess_interrupted(); default 1: blocked in
                                 the thread calling tess_init (and so in every thread started
                                 after it) and taken by a runtime thread (docs/failures.md) */
    int verbose;              /* 1: runtime log lines on stderr; default 0 (TESS_VERBOSE=1) */
    /* Work stealing between ranks (docs/stealing.md): an idle rank takes the
     * biggest not-yet-started task of the busiest rank, and the task's
     * partitions move with it, when the estimated gain exceeds the cost of
     * the move.  Default 1; TESS_STEAL=0 in the environment turns it off. */
    int steal;
    /* Throttle for experiments and tests: rank slow_rank runs as if on a
     * machine slow_factor times slower — its kernel instances, its workers'
     * flushes and its handling of incoming messages each take slow_factor
     * times as long.  After each, the thread spends (slow_factor - 1) x its
     * time spinning on the clock (slow_sleep 0, the default: it keeps its
     * core, like a slower core would) or asleep (slow_sleep 1: the core is
     * free for other threads meanwhile, so on a machine with fewer cores
     * than threads the rank is slowed less than slow_factor; cheap for
     * tests).  slow_rank -1 (the default) throttles nothing;
     * TESS_SLOW_WORKER=RANK:FACTOR[:MODE] sets them (MODE spin or sleep). */
    int slow_rank;
    double slow_factor;
    int slow_sleep;
    /* Timeout flush (docs/tables.md, "When other kernels see a write"): a
     * kernel's buffered table writes are sent to their partitions' owners
     * once the oldest of them is this many milliseconds old, even while the
     * kernel keeps running and never flushes.  Default 5; 0 sends only when
     * a buffer fills, on tess_table_flush, at the instance's end and at
     * barriers (maximum batching).  A table's spec.flush_ms overrides it.
     * TESS_FLUSH_MS in the environment sets it (a number >= 0). */
    double flush_ms;
} tess_config;

/* Fill *cfg with defaults, then apply TESS_WORKERS, TESS_VERBOSE, TESS_STEAL,
 * TESS_SLOW_WORKER and TESS_FLUSH_MS from the environment (malformed values are ignored with a
 * warning on stderr). */
TESS_API void tess_config_init(tess_config *cfg);

/* Parse "RANK:FACTOR[:MODE]" (RANK >= 0, 1 <= FACTOR <= 1000, MODE spin
 * (the default, *sleep_out = 0) or sleep (*sleep_out = 1)) as used by
 * --slow-worker and TESS_SLOW_WORKER.  TESS_ERR_INVAL on anything else,
 * leaving the outputs untouched.  Any thread. */
TESS_API int tess_parse_slow_worker(const char *spec, int *rank_out, double *factor_out,
                                    int *sleep_out);

typedef struct tess_ctx tess_ctx;
typedef struct tess_task tess_task;
typedef struct tess_table tess_table;

/*
 * Create a runtime.  In MPI mode this initialises MPI (on the runtime's
 * progress thread; only one MPI-mode context may exist per process).  On
 * failure *ctx_out is untouched; a message has been printed on stderr.
 */
TESS_API int tess_init(const tess_config *cfg, tess_ctx **ctx_out);

/* Stop the runtime and free everything it owns.  Accepts NULL. */
TESS_API void tess_finalize(tess_ctx *ctx);

/* Detailed message of the last error on this context (which file, line or
 * option).  Valid until the next failing call; never NULL. */
TESS_API const char *tess_last_error(const tess_ctx *ctx);
/* The same message copied into buf (len bytes, NUL-terminated), under the
 * context's lock: for a thread that may read it while another fails, such
 * as a control function whose barrier returned on a signal while kernels
 * still end.  Returns buf. */
TESS_API char *tess_last_error_copy(tess_ctx *ctx, char *buf, size_t len);

/* Record a one-line message as ctx's last error and return `status` (a
 * negative TESS_ERR_* code): how a callback the runtime calls (a kernel, a
 * tick application's PART) says why it failed.  The message speaks of values
 * and files, not of command-line options (a CLI adds those).  Any thread;
 * the last writer wins. */
TESS_API int tess_set_error(tess_ctx *ctx, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

TESS_API int tess_rank(const tess_ctx *ctx); /* 0 .. nranks-1 */
TESS_API int tess_nranks(const tess_ctx *ctx);
TESS_API int tess_workers(const tess_ctx *ctx);       /* on this rank */
TESS_API int tess_workers_total(const tess_ctx *ctx); /* over all ranks */
TESS_API int tess_is_mpi(const tess_ctx *ctx);        /* 1 in MPI mode */

/* A kernel instance.  Returns 0, or a negative status that the next
 * tess_barrier() reports as TESS_ERR_KERNEL. */
typedef int (*tess_kernel_fn)(tess_task *task, const void *args, size_t args_len);

/* The control function runs on rank 0's main thread only. */
typedef int (*tess_control_fn)(tess_ctx *ctx, void *app);

/* Register a kernel under a name.  Before tess_main() only, same on every rank. */
TESS_API int tess_register_kernel(tess_ctx *ctx, const char *name, tess_kernel_fn fn);

/*
 * Start the workers (and the progress engine in MPI mode); rank 0 runs
 * control(ctx, app) while the other ranks serve.  Returns control's return
 * value on every rank.  `app` is this process's own pointer, handed to its
 * kernels through tess_task_app(); it is never sent anywhere.  When the
 * worker threads cannot be started, a message has been printed on stderr
 * (as for tess_init) and the status is returned.
 */
TESS_API int tess_main(tess_ctx *ctx, tess_control_fn control, void *app);

/*
 * Launch `instances` instances of a registered kernel (control function only).
 * With a locality table, instance i runs on the rank that stores partition i
 * of it (instances must then equal its partition count); within a rank the
 * instances run biggest partition first.  `args` (copied) reach every instance.
 * Returns once launched; tess_barrier() waits for completion.
 * instances == TESS_EVERY_WORKER (no locality table) launches one instance
 * per worker: instances = tess_workers_total(), each rank runs as many as it
 * has workers, and every worker runs exactly one of them (the tick face's
 * processes): a worker whose instance returned waits until the run's other
 * instances on its rank have started, so it never takes a second one.
 */
#define TESS_EVERY_WORKER (-1)
TESS_API int tess_run(tess_ctx *ctx, const char *kernel, int instances, tess_table *locality,
                      const void *args, size_t args_len);

/*
 * Wait until every launched kernel instance has finished and every table
 * write issued before the barrier has been applied (control function only).
 * Termination is decided by counting messages sent and applied, never by
 * timing.  Returns TESS_ERR_KERNEL if an instance failed (see
 * tess_last_error), TESS_ERR_INTERRUPTED after SIGINT/SIGTERM.
 */
TESS_API int tess_barrier(tess_ctx *ctx);

/* 1 once SIGINT/SIGTERM was received or a rank aborted.  Any thread. */
TESS_API int tess_interrupted(const tess_ctx *ctx);

/* Accessors for a running kernel instance; valid during the kernel call. */
TESS_API int tess_task_instance(const tess_task *task);
TESS_API int tess_task_instances(const tess_task *task);
TESS_API int tess_task_worker(const tess_task *task); /* global worker id */
TESS_API tess_ctx *tess_task_ctx(const tess_task *task);
TESS_API void *tess_task_app(const tess_task *task);

/* Runtime counters of this rank (messages between ranks, table traffic). */
typedef struct tess_stats {
    uint64_t messages_sent; /* messages handed to the message layer for another rank */
    uint64_t bytes_sent;
    uint64_t messages_received;
    uint64_t bytes_received;
    uint64_t batches_sent;         /* MPI sends carrying those messages */
    uint64_t updates_local;        /* table updates applied to partitions of this rank */
    uint64_t updates_remote;       /* table updates sent to other ranks (after combining) */
    double wait_seconds;           /* control/barrier time spent waiting */
    double progress_cpu_seconds;   /* CPU used by the MPI progress engine (0 embedded) */
    uint64_t steals;               /* rank 0: tasks moved between ranks by work stealing */
    uint64_t migrations_in;        /* partition groups this rank received */
    uint64_t migrations_out;       /* partition groups this rank gave away */
    uint64_t barriers;             /* rank 0: tess_barrier calls with more than one rank */
    uint64_t barriers_asked;       /* rank 0: of those, the ones that asked every rank for its
                                    write counts (a round trip) instead of ending on the counts
                                    the ranks report when done (docs/tables.md) */
    uint64_t replica_bytes_shared; /* replicated tables: bytes of ranges written here that
                                      ranks on this node copied from its shared segment
                                      instead of receiving them as messages (per rank) */
} tess_stats;

/* Snapshot of this rank's counters.  Any thread. */
TESS_API void tess_get_stats(const tess_ctx *ctx, tess_stats *stats_out);

/* Wall-clock seconds from a monotonic clock. */
TESS_API double tess_now(void);

#ifdef __cplusplus
}
#endif

#include "tessera/table.h"
#include "tessera/checkpoint.h"
#include "tessera/rng.h"

#endif /* TESSERA_TESSERA_H */
