/*
 * store_impl.h — what the checkpoint store's files share: the store handle,
 * path building and the few file operations, each failing with one line
 * naming the file.  Private to src/ckpt.
 */
#ifndef TESS_SRC_CKPT_STORE_IMPL_H
#define TESS_SRC_CKPT_STORE_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "ckpt/manifest.h"
#include "ckpt/store.h"

#if !TESS_HAVE_ZSTD || !TESS_HAVE_XXHASH
#error "the checkpoint store needs libzstd and libxxhash (CMakeLists.txt requires them)"
#endif

/* Room for DIR plus the longest name the store appends. */
#define TESS__CKPT_PATH_MAX 4096
#define TESS__CKPT_DIR_MAX (TESS__CKPT_PATH_MAX - 128)

struct tess__ckpt_store {
    char *dir;
    uint64_t fingerprint;
    tess__ckpt_fail_hook hook;
    void *hook_arg;
    tess__ckpt_pace_hook pace;
    void *pace_arg;
    tess__ckpt_file *statics; /* static files known to be saved, manifest order */
    uint32_t nstatics;
    int writing; /* a writer is open */
};

/* The store now knows m's static files (best effort: on NOMEM it keeps the
 * old list, and a later epoch would then fail to reference them). */
void tess__ckpt_remember_static(tess__ckpt_store *s, const tess__ckpt_manifest *m);

/* snprintf into err when err is non-NULL; returns code. */
int tess__ckpt_err(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* "DIR/epoch-NNNNNNNN<suffix>" ("" for a committed epoch, ".tmp" while built). */
void tess__ckpt_epoch_path(const tess__ckpt_store *s, uint64_t epoch, const char *suffix, char *buf,
                           size_t buflen);
/* DIR/static (generation 1) or DIR/static-G: where static files live. */
void tess__ckpt_static_dir(const tess__ckpt_store *s, unsigned generation, char *buf,
                           size_t buflen);
/* The directory holding file f of the epoch directory epoch_dir. */
void tess__ckpt_file_path(const tess__ckpt_store *s, const char *epoch_dir,
                          const tess__ckpt_file *f, char *buf, size_t buflen);
/* Parse "epoch-<digits><suffix>"; 1 on a match. */
int tess__ckpt_parse_epoch_name(const char *name, const char *suffix, uint64_t *epoch_out);

/* Create path (a new file: an existing one or a link there fails), write and
 * fsync it. */
int tess__ckpt_write_file(const tess__ckpt_store *s, const char *path, const void *data, size_t len,
                          char *err, size_t errlen);
/* Between a file's name and the random suffix of its temporary. */
#define TESS__CKPT_TMP_MARK ".tmp."
/* Write and fsync a new "PATH.tmp.XXXXXX" (random suffix; its name into
 * tmp[tmpcap], which must hold path and 12 bytes more). */
int tess__ckpt_write_temp(const tess__ckpt_store *s, const char *path, const void *data, size_t len,
                          char *tmp, size_t tmpcap, char *err, size_t errlen);
/* Replace path atomically: write and fsync "PATH.tmp.XXXXXX" (new, random
 * suffix), then rename it onto path.  The caller fsyncs the directory. */
int tess__ckpt_write_replace(const tess__ckpt_store *s, const char *path, const void *data,
                             size_t len, char *err, size_t errlen);
/* 1 when `name` is such a temporary ("NAME.tmp.XXXXXX"). */
int tess__ckpt_is_tmp_name(const char *name);
int tess__ckpt_fsync_dir(const tess__ckpt_store *s, const char *path, char *err, size_t errlen);
int tess__ckpt_rename(const tess__ckpt_store *s, const char *from, const char *to, char *err,
                      size_t errlen);
/* mkdir unless it exists already as a directory. */
int tess__ckpt_mkdir(const char *path, char *err, size_t errlen);
/* Whole file into a malloc'd buffer (NULL when empty). */
int tess__ckpt_read_file(const char *path, uint8_t **buf_out, size_t *len_out, char *err,
                         size_t errlen);
/* Epoch numbers of DIR's entries named "epoch-N<suffix>", ascending. */
int tess__ckpt_scan(const tess__ckpt_store *s, const char *suffix, uint64_t **epochs_out,
                    size_t *n_out, char *err, size_t errlen);
/* Read and decode DIR/epoch-N/MANIFEST, checking its epoch and fingerprint. */
int tess__ckpt_load_manifest(const tess__ckpt_store *s, uint64_t epoch, tess__ckpt_manifest *m_out,
                             char *err, size_t errlen);
/* The fingerprint in the header of DIR/epoch-N<suffix>/MANIFEST; 1 when it
 * has one (the rest of the manifest unchecked), else 0. */
int tess__ckpt_epoch_fingerprint(const tess__ckpt_store *s, uint64_t epoch, const char *suffix,
                                 uint64_t *fp_out);
/* Remove a flat directory and the files in it (a link at path: the link
 * only); 0, or -1 with errno. */
int tess__ckpt_remove_dir(const char *path);

#endif /* TESS_SRC_CKPT_STORE_IMPL_H */
