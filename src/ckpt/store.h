/*
 * store.h — the on-disk checkpoint store: one directory per epoch holding a
 * zstd-compressed file per (table, partition), optional replay logs and a
 * MANIFEST written last (docs/checkpoint-format.md).  The bytes of a
 * partition or log are opaque here; the snapshot protocol decides what they
 * are.  Private to the library.
 *
 * Crash safety: an epoch is built in DIR/epoch-N.tmp/ and renamed to
 * DIR/epoch-N/ only after every file and the manifest are on disk, so a crash
 * at any point leaves either the complete epoch or a directory the reader
 * ignores.  The reader still verifies every checksum, for the disk's sake.
 *
 * Errors: every call returns a tess_status and, on failure, writes one line
 * naming the file into err[errlen] (err may be NULL).  No global state; a
 * store and the writers and epochs made from it belong to one thread at a
 * time.
 */
#ifndef TESS_SRC_CKPT_STORE_H
#define TESS_SRC_CKPT_STORE_H

#include <stddef.h>
#include <stdint.h>

typedef struct tess__ckpt_store tess__ckpt_store;
typedef struct tess__ckpt_writer tess__ckpt_writer;
typedef struct tess__ckpt_epoch tess__ckpt_epoch;

/*
 * Open the store in `dir` (created if missing; its parent must exist) for the
 * job identified by `fingerprint`.  *store_out is set only on success.
 */
int tess__ckpt_store_open(const char *dir, uint64_t fingerprint, tess__ckpt_store **store_out,
                          char *err, size_t errlen);
/*
 * Claim the directory for this job (rank 0, before any epoch is read or
 * written): DIR/OWNER is written when the directory is free.  A directory of
 * another job (its OWNER, or the manifests of its epochs, record another
 * fingerprint) is refused with TESS_ERR_INVAL and left untouched, unless
 * `overwrite`: then its epochs and static files are deleted first.  Also
 * removes the temporaries that killed writers left in the static directories.
 */
int tess__ckpt_claim(tess__ckpt_store *s, int overwrite, char *err, size_t errlen);
/* Free the handle (the files stay).  Every writer and epoch must be closed
 * first.  Accepts NULL. */
void tess__ckpt_store_close(tess__ckpt_store *s);

/* Test hook: before each write, fsync or rename the store calls
 * hook(arg, path); a nonzero return makes that step fail as if with EIO. */
typedef int (*tess__ckpt_fail_hook)(void *arg, const char *path);
void tess__ckpt_store_set_fail_hook(tess__ckpt_store *s, tess__ckpt_fail_hook hook, void *arg);

/* Pacing: while compressing, the store calls pace(arg, 1) before each chunk
 * of about 1 MB (the hook may block until the caller wants it to go on) and
 * pace(arg, 0) once the file is compressed.  Called from whichever thread
 * writes; the hook must be thread-safe. */
typedef void (*tess__ckpt_pace_hook)(void *arg, int busy);
void tess__ckpt_store_set_pace_hook(tess__ckpt_store *s, tess__ckpt_pace_hook hook, void *arg);

/* ---------------------------------------------------------------- writer */

/*
 * Start epoch `epoch` in DIR/epoch-N.tmp/ (a leftover of that name from a
 * crash is removed first).  One writer per store at a time.
 */
int tess__ckpt_begin(tess__ckpt_store *s, uint64_t epoch, tess__ckpt_writer **w_out, char *err,
                     size_t errlen);

/* Record the partition map of `table`: nparts owner ranks (copied).  A static
 * table's files go to DIR/static/ and later epochs reference them. */
int tess__ckpt_set_table(tess__ckpt_writer *w, uint32_t table, uint32_t nparts,
                         const int32_t *owners, int is_static, char *err, size_t errlen);

/* Compress len bytes (copied, may be 0) into the file of (table, partition).
 * set_table must have declared the table.  For a static table that an earlier
 * epoch of this store already saved, the new file replaces the old one. */
int tess__ckpt_add_partition(tess__ckpt_writer *w, uint32_t table, uint32_t part, const void *data,
                             size_t len, char *err, size_t errlen);

/* Compress len bytes into the replay log of `rank`. */
int tess__ckpt_add_log(tess__ckpt_writer *w, uint32_t rank, const void *data, size_t len, char *err,
                       size_t errlen);

/*
 * Several ranks: a rank other than the committing one writes its files with
 * tess__ckpt_write_entry into DIR/epoch-N.tmp/ (which the committer's
 * tess__ckpt_begin created) or DIR/static/, and the committer records them
 * with tess__ckpt_add_written.  `f` gives kind, in_static, a and b; sizes and
 * checksum are filled in.  Thread-safe with respect to other stores.
 */
struct tess__ckpt_file;
int tess__ckpt_write_entry(const tess__ckpt_store *s, uint64_t epoch, struct tess__ckpt_file *f,
                           const void *data, size_t len, char *err, size_t errlen);
int tess__ckpt_add_written(tess__ckpt_writer *w, const struct tess__ckpt_file *f, char *err,
                           size_t errlen);

/* 1 if the writer holds the file (kind, a, b), written or added. */
int tess__ckpt_writer_has_file(const tess__ckpt_writer *w, uint8_t kind, uint32_t a, uint32_t b);

/* Opaque user data (copied; replaces earlier data of this writer). */
int tess__ckpt_set_user_data(tess__ckpt_writer *w, const void *data, size_t len, char *err,
                             size_t errlen);

/* The newest generation of static files this store knows (0: none).  A job
 * that must save its static tables again (restored onto another partition
 * count) writes generation + 1, so the epochs it may fall back to keep
 * theirs. */
unsigned tess__ckpt_static_generation(const tess__ckpt_store *s);

/* 1 if this store already holds the static files of `table` (saved by an
 * earlier commit, or found by tess__ckpt_open_latest); a static table with no
 * files added in an epoch references those. */
int tess__ckpt_static_saved(const tess__ckpt_store *s, uint32_t table);

/*
 * Write the manifest last (temporary file, fsync, rename, fsync), rename the
 * epoch directory into place and fsync DIR.  Frees w whatever the outcome;
 * on failure the partial epoch is removed.  Once any call on w has failed,
 * commit fails too.
 */
int tess__ckpt_commit(tess__ckpt_writer *w, char *err, size_t errlen);

/* Remove the partial epoch and free w.  Accepts NULL. */
void tess__ckpt_abort(tess__ckpt_writer *w);

/* ---------------------------------------------------------------- reader */

/* Epoch numbers of the committed epoch directories, ascending (verified
 * only by name; *epochs_out is malloc'd, NULL when *n_out is 0). */
int tess__ckpt_list(const tess__ckpt_store *s, uint64_t **epochs_out, size_t *n_out, char *err,
                    size_t errlen);

/* Called once for each epoch passed over, with one line naming the file. */
typedef void (*tess__ckpt_report_fn)(void *arg, const char *line);

/* 0 to take an epoch that opened, or nonzero with a one-line reason in why
 * ("refused ...: what is wrong"), reported after the epoch's path. */
typedef int (*tess__ckpt_accept_fn)(void *arg, const tess__ckpt_epoch *e, char *why, size_t whylen);

/*
 * Open the newest epoch below `below` (UINT64_MAX: any) whose manifest
 * decodes, whose every file has the recorded size and checksum, and that
 * accept (NULL: any) takes.  Each newer epoch that fails or is refused is
 * reported and skipped.  TESS_ERR_NOTFOUND when no epoch qualifies (err says whether any
 * was skipped); TESS_ERR_INVAL when a valid manifest carries another job's
 * fingerprint ("checkpoint written by a different job").  Also makes the
 * epoch's static files known to later writers of s.
 */
int tess__ckpt_open_latest(tess__ckpt_store *s, uint64_t below, tess__ckpt_report_fn report,
                           void *report_arg, tess__ckpt_accept_fn accept, void *accept_arg,
                           tess__ckpt_epoch **e_out, char *err, size_t errlen);

/* Open and verify one given epoch, the same way. */
int tess__ckpt_open_epoch(const tess__ckpt_store *s, uint64_t epoch, tess__ckpt_epoch **e_out,
                          char *err, size_t errlen);

/* The same without hashing every file first, for a rank loading the epoch
 * that another rank has just verified: each read still checks its file's
 * size and checksum, so damage since then is still caught. */
int tess__ckpt_open_epoch_verified_elsewhere(const tess__ckpt_store *s, uint64_t epoch,
                                             tess__ckpt_epoch **e_out, char *err, size_t errlen);

void tess__ckpt_epoch_close(tess__ckpt_epoch *e); /* accepts NULL */

uint64_t tess__ckpt_epoch_number(const tess__ckpt_epoch *e);

/* User data, valid until the epoch is closed (NULL when *len_out is 0). */
const void *tess__ckpt_epoch_user_data(const tess__ckpt_epoch *e, size_t *len_out);

/* Tables recorded, in increasing id order: the i-th id (i < count). */
uint32_t tess__ckpt_epoch_table_count(const tess__ckpt_epoch *e);
uint32_t tess__ckpt_epoch_table_id(const tess__ckpt_epoch *e, uint32_t i);

/* Partition map of a table: *owners_out is valid until the epoch is closed.
 * TESS_ERR_NOTFOUND if the epoch has no such table. */
int tess__ckpt_epoch_table(const tess__ckpt_epoch *e, uint32_t table, uint32_t *nparts_out,
                           const int32_t **owners_out, int *is_static_out);
/* 1 if the epoch records a file for partition `part` of `table`. */
int tess__ckpt_epoch_has_partition(const tess__ckpt_epoch *e, uint32_t table, uint32_t part);

/* Read, verify and decompress a partition or a log into a malloc'd buffer
 * the caller frees (NULL when *len_out is 0).  TESS_ERR_NOTFOUND when the
 * epoch recorded no such file. */
int tess__ckpt_read_partition(const tess__ckpt_epoch *e, uint32_t table, uint32_t part,
                              void **data_out, size_t *len_out, char *err, size_t errlen);
/* The rank of the epoch's i-th replay log (the manifest lists them in rank
 * order): 1, or 0 when it has fewer than i + 1 logs. */
int tess__ckpt_epoch_log_rank(const tess__ckpt_epoch *e, uint32_t i, uint32_t *rank_out);
int tess__ckpt_read_log(const tess__ckpt_epoch *e, uint32_t rank, void **data_out, size_t *len_out,
                        char *err, size_t errlen);

/* ---------------------------------------------------------------- retention */

/*
 * Keep the `keep` (>= 1) newest epochs whose manifest decodes with this
 * store's fingerprint; delete every epoch directory (and leftover temporary
 * one) older than the oldest kept, except one whose manifest records another
 * job's fingerprint: retention never deletes another job's epochs.  Data files are not re-read: retention is
 * cheap enough to run after every commit.
 */
int tess__ckpt_retain(const tess__ckpt_store *s, unsigned keep, char *err, size_t errlen);

#endif /* TESS_SRC_CKPT_STORE_H */
