/*
 * ckpt.h — the checkpoint layer's internal interface: the checkpoint state
 * of a context, shared by snapshot.c (the Chandy–Lamport protocol and the
 * API), writers.c (writer and committer threads) and restore.c, and what
 * src/runtime.c calls.  Private to src/ckpt and src/runtime.c.
 *
 * The checkpoint layer sits above sched and table.  It reaches them by
 * calls, and they reach it only through what it plugs in while checkpoints
 * are enabled: the table intercept (tess__table_set_intercept), the
 * scheduler's hooks (tess__sched_set_ckpt_hooks) and the cut function it
 * hands to tess__sched_request_cut.
 *
 * Protocol, per epoch E (docs/checkpoints.md has the argument):
 *   rank 0 starts E: creates DIR/epoch-E.tmp and sends MARK(E) to every rank;
 *   a rank that sees E for the first time (from rank 0 or from any other
 *   rank's marker) asks its queue for a cut; the queue calls the cut function snapshot.c handed it (make_cut)
 *   once the workers are at rest (CpPeriodic: every running kernel at a
 *   checkpoint point; CpBarrier: all tasks of the run done);
 *   the cut copies the local partitions, then sends MARK(E) to every other
 *   rank behind all of this rank's earlier writes;
 *   table writes from a rank whose marker has not arrived are logged after
 *   the cut (channel state), and writes from a rank whose marker arrived
 *   before the cut are held and applied right after it;
 *   once every marker is in, a writer thread compresses and writes the
 *   copies and the log, then sends FILES(E) to rank 0, whose committer
 *   writes the MANIFEST when every rank's files are in.
 */
#ifndef TESS_SRC_CKPT_CKPT_H
#define TESS_SRC_CKPT_CKPT_H

#include <stdatomic.h>
#include <pthread.h>
#include "ckpt/manifest.h"
#include "ckpt/store.h"
#include "sched/sched.h"
#include "table/table_internal.h"

/* Message types of the checkpoint layer (see the block list in comm/comm.h). */
enum tess__ckpt_msg_type {
    TESS_MSG_CKPT_MARK = 18,     /* rank 0 starts an epoch, or a rank's marker */
    TESS_MSG_CKPT_FILES = 19,    /* rank -> 0: its files of an epoch are written (or failed) */
    TESS_MSG_CKPT_RESTORE = 20,  /* rank 0 -> all: load an epoch */
    TESS_MSG_CKPT_RESTORED = 21, /* rank -> 0: loaded (status) */
    TESS_MSG_CKPT_HURRY = 22     /* rank 0 -> all: stop pacing the writers of an epoch */
};

enum { CKPT_SYNC = 1, CKPT_ASYNC = 2 };

/* MARK: rank 0's start of an epoch (initiation = 1) or a rank's marker. */
typedef struct tess__ckpt_mark {
    uint64_t epoch;
    uint64_t run_seq;                           /* rank 0's latest run when the epoch started */
    int32_t mode, save_static, initiation, pad; /* save_static: generation, 0 = none */
} tess__ckpt_mark;

/* One encoded local partition taken at the cut. */
typedef struct tess__ckpt_copy {
    uint32_t table, part;
    uint8_t *buf;
    size_t len;
} tess__ckpt_copy;

/* A table message from a rank whose marker came before this rank's cut. */
typedef struct tess__ckpt_held {
    int src;
    uint32_t type;
    size_t len;
    uint8_t *bytes;
} tess__ckpt_held;

/* What a rank hands its writer thread when its part of an epoch is complete. */
typedef struct tess__ckpt_job {
    tess_ctx *ctx;
    uint64_t epoch;
    int static_generation; /* > 0: also write the static tables, from the live
                                   partitions (they no longer change) */
    int paced;             /* write on cores no worker uses (writers.c) */
    tess__ckpt_copy *copies;
    int ncopies;
    uint8_t *log, *tasks;
    size_t log_len, tasks_len;
} tess__ckpt_job;

struct tess__ckpt_rt {
    char *dir, *job;
    int keep;
    int overwrite;                /* claim a directory of another job (deleting its epochs) */
    uint64_t fingerprint;         /* set when tess_main starts */
    uint64_t fail_epoch;          /* TESS_CKPT_FAIL_EPOCH test hook, 0 = none */
    int writer_paced;             /* CpBarrier writers paced (TESS_CKPT_WRITER) */
    _Atomic uint64_t hurry_epoch; /* writers of epochs <= this one are no longer paced */
    pthread_rwlock_t rw;          /* readers: table messages; writer: the cut */
    pthread_mutex_t mu;           /* everything below */
    pthread_cond_t cv;

    /* this rank's part of the epoch in progress */
    uint64_t epoch; /* newest epoch seen */
    int phase;      /* 0 idle, 1 waiting for the cut, 2 logging */
    int mode, save_static;
    uint64_t run_seq;     /* the cut comes after this run's RUN message */
    uint8_t *marker_seen; /* per rank, for `epoch` */
    int markers_missing;
    tess__ckpt_held *held;
    int nheld, held_cap;
    uint8_t *log;
    size_t log_len, log_cap;
    tess__ckpt_copy *copies;
    int ncopies;
    uint8_t *tasks;
    size_t tasks_len;
    int writers; /* writer threads running */
    int closing; /* quiesced: no writer starts any more */

    /* rank 0: the epoch being committed */
    tess__ckpt_store *store; /* begin/commit/retain/restore (rank 0) */
    tess__ckpt_writer *writer;
    uint64_t next_epoch;
    uint64_t committing; /* epoch whose files are being collected, 0 none */
    uint64_t hurried;    /* newest epoch whose writers were told to hurry */
    int files_in;        /* ranks whose FILES arrived */
    int commit_failed;
    char commit_error[512];
    uint8_t *rank_tasks; /* concatenated task blobs of the ranks */
    size_t rank_tasks_len;
    uint8_t *user; /* user data of the epoch being committed */
    size_t user_len;
    uint64_t last_committed;
    int first_failure; /* since the last tess_checkpoint_wait */
    char failure[512];
    int static_resave; /* statics restored with another partition count */

    /* rank 0: CpPeriodic */
    double period;
    uint8_t *periodic_user;
    size_t periodic_user_len;
    pthread_t timer;
    int timer_running, timer_stop;

    /* restore: the runs in flight at the restored epoch */
    int restore_waiting; /* rank 0: ranks whose RESTORED is missing */
    int restore_status;
    char restore_error[512];
    char *restored_kernel;
    uint8_t *restored_tasks;
    size_t restored_tasks_len;

    tess_checkpoint_stats stats;
};

/* writers.c */
void tess__ckpt_start_writer(tess__ckpt_rt *rt, tess__ckpt_job *job);
int tess__ckpt_start_committer(tess_ctx *ctx, uint64_t epoch);
void tess__ckpt_on_files(tess_ctx *ctx, int src, const uint8_t *p, size_t len);
void tess__ckpt_job_free(tess__ckpt_job *job);
/* Open this rank's file-writing store (its own handle, any rank). */
int tess__ckpt_open_store(tess_ctx *ctx, tess__ckpt_store **s_out, char *err, size_t errlen);

/* restore.c */
void tess__ckpt_on_restore(tess_ctx *ctx, int src, const uint8_t *p, size_t len);
void tess__ckpt_on_restored(tess_ctx *ctx, int src, const uint8_t *p, size_t len);

/* snapshot.c: rank 0, once for each epoch started: that epoch no longer
 * keeps work stealing from moving partitions */
void tess__ckpt_allow_moves(tess_ctx *ctx);
/* snapshot.c */
int tess__ckpt_check_control(tess_ctx *ctx, const char *what);
uint64_t tess__ckpt_fingerprint(tess_ctx *ctx);
/* Record a failed epoch (counted, reported once). */
void tess__ckpt_note_failure(tess_ctx *ctx, int rc, const char *msg);
/* Rank 0: open the store restore and the committer read from. */
int tess__ckpt_open_rank0_store(tess_ctx *ctx, char *err, size_t errlen);
/* restore.c: the positions of a restored run's kernel instances (a
 * tess__sched_ckpt_hooks.take_restored). */
int tess__ckpt_take_restored(tess_ctx *ctx, const char *kernel, uint8_t **recs_out,
                             size_t *len_out);

/* ---- what src/runtime.c calls ---- */
/* Register the handlers of the checkpoint messages (they ignore a context
 * without checkpoints). */
int tess__ckpt_handlers_init(tess_ctx *ctx);
/* Stop taking checkpoints and let the one in progress finish. */
void tess__ckpt_quiesce(tess_ctx *ctx);
/* Wait for the writer threads and free the checkpoint state.  Accepts none. */
void tess__ckpt_free(tess_ctx *ctx);

#endif
