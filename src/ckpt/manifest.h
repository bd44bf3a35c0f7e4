/*
 * manifest.h — the MANIFEST of a checkpoint epoch: what it records and its
 * binary encoding (docs/checkpoint-format.md).  The decoder accepts exactly
 * what the encoder produces: any other bytes give TESS_ERR_FORMAT and a
 * one-line message, so encode(decode(x)) == x for every accepted x.
 * Private to src/ckpt; no state, any thread.
 */
#ifndef TESS_SRC_CKPT_MANIFEST_H
#define TESS_SRC_CKPT_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#define TESS__CKPT_MAGIC "TESSCKPT"
#define TESS__CKPT_VERSION 1u

/* Sanity limits, far above any real job, that bound what a decoder allocates. */
#define TESS__CKPT_MAX_TABLES 65536u
#define TESS__CKPT_MAX_PARTS (1u << 24)

enum { TESS__CKPT_FILE_PARTITION = 0, TESS__CKPT_FILE_LOG = 1 };

/* The partition map of one table: owner rank of each partition. */
typedef struct tess__ckpt_table_map {
    uint32_t table;
    uint32_t nparts;
    int is_static;   /* files live in DIR/static/, written once per job */
    int32_t *owners; /* nparts ranks, each >= 0; owned by the manifest */
} tess__ckpt_table_map;

/* One data file.  Its name is derived from kind/a/b, never stored, so a
 * manifest cannot name a path outside the checkpoint directory. */
typedef struct tess__ckpt_file {
    uint8_t kind;      /* TESS__CKPT_FILE_* */
    uint8_t in_static; /* 0: the epoch directory; g >= 1: static files of
                          generation g, DIR/static/ (g = 1) or DIR/static-g/ */
    uint32_t a;        /* partition: table id; log: rank */
    uint32_t b;        /* partition: partition index; log: 0 */
    uint64_t size;     /* bytes on disk (compressed) */
    uint64_t raw_size; /* bytes after decompression */
    uint64_t xxh64;    /* XXH64 (seed 0) of the bytes on disk */
} tess__ckpt_file;

typedef struct tess__ckpt_manifest {
    uint64_t fingerprint;
    uint64_t epoch;
    tess__ckpt_table_map *tables; /* strictly increasing table ids */
    uint32_t ntables;
    tess__ckpt_file *files; /* strictly increasing (kind, a, b) */
    uint32_t nfiles;
    uint8_t *user; /* opaque user data, may be NULL when empty */
    uint32_t user_len;
} tess__ckpt_manifest;

/* "t<TABLE>-p<PART>.zst" or "log-<RANK>.zst" into buf (>= 32 bytes). */
void tess__ckpt_file_name(const tess__ckpt_file *f, char *buf, size_t buflen);

/* Sort tables and files into manifest order; returns TESS_ERR_INVAL (message
 * in err) on a duplicate table, file, or a file that contradicts the map. */
int tess__ckpt_manifest_check(tess__ckpt_manifest *m, char *err, size_t errlen);

/* Encode m (already checked) into a malloc'd buffer the caller frees. */
int tess__ckpt_manifest_encode(const tess__ckpt_manifest *m, uint8_t **buf_out, size_t *len_out);

/* Decode len bytes of the file `name` (used in messages only).  On success
 * *m_out owns its arrays (free with tess__ckpt_manifest_free); on failure it
 * is left zeroed and err holds one line naming the file. */
int tess__ckpt_manifest_decode(const char *name, const uint8_t *buf, size_t len,
                               tess__ckpt_manifest *m_out, char *err, size_t errlen);

/* Free what m owns and zero it.  Accepts NULL. */
void tess__ckpt_manifest_free(tess__ckpt_manifest *m);

/* The table entry with this id, or NULL. */
const tess__ckpt_table_map *tess__ckpt_manifest_table(const tess__ckpt_manifest *m, uint32_t table);
/* The file entry (kind, a, b), or NULL. */
const tess__ckpt_file *tess__ckpt_manifest_file(const tess__ckpt_manifest *m, uint8_t kind,
                                                uint32_t a, uint32_t b);

#endif /* TESS_SRC_CKPT_MANIFEST_H */
