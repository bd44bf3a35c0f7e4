/*
 * checkpoint.h — consistent checkpoints of tables and restore after a
 * failure (Piccolo's CpBarrier and CpPeriodic).
 *
 * Both kinds are Chandy–Lamport snapshots at rank granularity: each rank
 * records its partitions at its own cut, sends a marker to every other rank,
 * and logs the table writes that reach it from a rank whose marker has not
 * arrived yet (the channel state).  A checkpoint is an epoch directory of the
 * checkpoint directory (docs/checkpoint-format.md): one zstd file per
 * partition, one replay log per rank and a MANIFEST written last.  Restore
 * takes the newest epoch whose checksums verify and works on any number of
 * ranks and partitions.
 *
 * Lifecycle: tess_checkpoint_enable() and tess_table_set_static() before
 * tess_main(), identically on every rank; the rest from the control
 * function (rank 0's main thread), except the two tess_task_ functions,
 * which kernels call.
 *
 * Writing is in the background: the calls that take a checkpoint return once
 * every rank has made its in-memory copy; compression, fsync and the
 * MANIFEST follow on writer threads.  CpBarrier's writer is paced: it
 * compresses only on cores that no worker is using (a thread per worker),
 * and the next tess_checkpoint_barrier() waits for the previous epoch's
 * commit; CpPeriodic's is one unpaced thread (so is CpBarrier's with
 * TESS_CKPT_WRITER=normal).  tess_checkpoint_wait() waits for them; tess_finalize()
 * does too.  A checkpoint that fails (disk
 * full, I/O error) is removed, reported on stderr and by
 * tess_checkpoint_wait(); the previous one stays usable and the job goes on.
 */
#ifndef TESSERA_CHECKPOINT_H
#define TESSERA_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Checkpoint into directory `dir` (created if missing; on a cluster it must
 * be one shared directory that every rank can write).  `job` names the job:
 * a checkpoint is restored only into a job with the same `job` string and the
 * same table shapes (names, key and value sizes, dense key counts,
 * accumulators); partition and rank counts may differ.  `keep` >= 1 epochs
 * are kept (0 = 2).  Before tess_main(), same on every rank; copies both
 * strings.
 */
TESS_API int tess_checkpoint_enable(tess_ctx *ctx, const char *dir, const char *job, int keep);

/*
 * A checkpoint directory belongs to one job (the same `job` string and table
 * shapes; rank and partition counts may differ).  tess_main() claims it on
 * rank 0 before the control function runs, and refuses a directory of
 * another job: it prints one line naming the directory and returns
 * TESS_ERR_INVAL without touching it.  With overwrite nonzero, such a
 * directory is taken instead and the other job's checkpoints in it are
 * deleted.  After tess_checkpoint_enable(), before tess_main(), same on
 * every rank.
 */
TESS_API int tess_checkpoint_set_overwrite(tess_ctx *ctx, int overwrite);

/*
 * Mark a table static: its content no longer changes once the first
 * checkpoint is taken (a graph, say).  It is saved in the first checkpoint of
 * a job only, and restored like the others.  Before tess_main().
 */
TESS_API int tess_table_set_static(tess_table *t);

/*
 * CpBarrier: tess_barrier() that also takes a checkpoint of every table as
 * of the barrier, with `user` (copied, may be NULL when len is 0) stored in
 * it — the iteration number, say.  Each rank makes its copy as soon as its
 * own tasks have finished, while the others still compute.  Control function
 * only.  Returns what tess_barrier() returns; a failure to write the
 * checkpoint is reported later (see tess_checkpoint_wait).
 */
TESS_API int tess_checkpoint_barrier(tess_ctx *ctx, const void *user, size_t len);

/*
 * CpPeriodic: from now on, while kernels run, take an asynchronous
 * checkpoint every `seconds` (0 stops), storing `user` (copied) with it.
 * Kernels must call tess_task_checkpoint_point() between units of work so
 * that each rank can make its cut without stopping the other ranks; a rank's
 * cut waits until each of its running kernels reaches such a point or ends.
 * Control function only.
 */
TESS_API int tess_checkpoint_periodic(tess_ctx *ctx, double seconds, const void *user, size_t len);

/*
 * Kernel side of CpPeriodic: "my writes so far are issued, and if I were
 * restarted I would continue from `position`" (len bytes, copied; at most
 * 64 KiB).  Cheap when no checkpoint is pending (one atomic load); otherwise
 * it flushes the caller's buffered writes and waits for its rank's cut.
 */
TESS_API int tess_task_checkpoint_point(tess_task *task, const void *position, size_t len);

/*
 * After tess_checkpoint_restore() of an asynchronous checkpoint, the first
 * tess_run() of the kernel that was running skips the instances that had
 * finished, and each instance that had saved a position gets it here (valid
 * during the kernel call).  NULL (and *len_out 0) for an instance that starts
 * from the beginning.
 */
TESS_API const void *tess_task_restored_position(const tess_task *task, size_t *len_out);

/*
 * Restore the newest complete checkpoint into the tables (control function,
 * before any tess_run that writes them).  On success *user_out is a malloc'd
 * copy of the user data (caller frees; NULL when *len_out is 0) and
 * *epoch_out (may be NULL) its epoch.  TESS_ERR_NOTFOUND when the directory
 * holds no usable checkpoint (tables untouched; tess_last_error says why);
 * each corrupt or incomplete newer epoch passed over is reported on stderr.
 * TESS_ERR_INVAL when the checkpoint belongs to another job.
 */
TESS_API int tess_checkpoint_restore(tess_ctx *ctx, void **user_out, size_t *len_out,
                                     uint64_t *epoch_out);

/*
 * The same, but the application sees each candidate epoch's user data first
 * (newest first, before any table is loaded): accept returns 0 to take it,
 * or nonzero with a one-line reason in why (why has whylen bytes), and the
 * epoch is then passed over — reported on stderr as a corrupt one is — and
 * the next older one tried.  For an epoch the run cannot continue from (one
 * past its last iteration) or user data the application finds invalid.
 */
typedef int (*tess_checkpoint_accept_fn)(void *arg, const void *user, size_t len, uint64_t epoch,
                                         char *why, size_t whylen);
TESS_API int tess_checkpoint_restore_accept(tess_ctx *ctx, tess_checkpoint_accept_fn accept,
                                            void *arg, void **user_out, size_t *len_out,
                                            uint64_t *epoch_out);

/*
 * The same, and once an epoch is loaded into the tables on every rank the
 * application checks what it got: validate (may be NULL) runs in the control
 * function, reads the tables as it likes (no NaN rank, the graph complete,
 * as many particles as the job has) and returns 0 to keep the epoch, or
 * nonzero with a one-line reason in why; the tables are then emptied and the
 * next older epoch tried, reported on stderr as a refused one is.
 *
 * Whatever the functions, restore passes over (the same way) an epoch whose
 * manifest lacks a table of this job or a partition's file, names a table
 * the job does not have, or whose partition files hold a key outside their
 * partition's range or one the writer's partitioning puts in another
 * partition (dense tables: checked where the writer's ranges are known —
 * the same partition count, or ranges split evenly).
 */
typedef int (*tess_checkpoint_validate_fn)(tess_ctx *ctx, void *arg, const void *user, size_t len,
                                           uint64_t epoch, char *why, size_t whylen);
TESS_API int tess_checkpoint_restore_checked(tess_ctx *ctx, tess_checkpoint_accept_fn accept,
                                             void *arg, tess_checkpoint_validate_fn validate,
                                             void *varg, void **user_out, size_t *len_out,
                                             uint64_t *epoch_out);

/*
 * Wait until every checkpoint started so far is committed or has failed.
 * Returns TESS_OK, or the status of the first failure since the last call
 * (message in tess_last_error).  *epoch_out (may be NULL) is the newest
 * committed epoch of this job, 0 if none.  Control function only.
 */
TESS_API int tess_checkpoint_wait(tess_ctx *ctx, uint64_t *epoch_out);

/* Figures of this rank's checkpoints so far (any thread). */
typedef struct tess_checkpoint_stats {
    uint64_t started, committed, failed; /* rank 0 only: whole checkpoints */
    double cut_seconds;                  /* time workers were held for the in-memory copy */
    double write_seconds;                /* background compression and writing */
    uint64_t bytes_written;              /* compressed bytes this rank wrote */
    uint64_t log_entries;                /* table writes logged as channel state */
    double restore_seconds;              /* the last restore, on this rank */
} tess_checkpoint_stats;

TESS_API void tess_checkpoint_get_stats(const tess_ctx *ctx, tess_checkpoint_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_CHECKPOINT_H */
