/*
 * tile_journal.h — the files of a tiles checkpoint (tile_ckpt.h): the
 * journal record and its checksums, reading a journal back (every record
 * checked, its output read from tiles.data and checked), the identity
 * compared with this run's, and the box arithmetic the journal needs
 * (marking a box's cells done, copying its output into the whole area's).
 * The format is in docs/checkpoints.md.
 */
#ifndef TESS_APPS_TILE_JOURNAL_H
#define TESS_APPS_TILE_JOURNAL_H

#include <stddef.h>
#include <stdint.h>
#include "tessera/tile.h"

#define APP_TILE_JOURNAL_MAGIC "TESSTJ01"
#define APP_TILE_JOURNAL_HEADER 16 /* the magic, then the identity's u64 hash */
#define APP_TILE_IDENTITY "tiles.identity"
#define APP_TILE_JOURNAL "tiles.journal"
#define APP_TILE_DATA "tiles.data"

/* One finished tile: its box, where its output lies in tiles.data, the
 * output's checksum, and the checksum of the record's first 96 bytes. */
struct app_tile_record {
    char magic[4]; /* "TJR1" */
    uint32_t ndims;
    int64_t lo[TESS_TILE_MAX_DIMS], hi[TESS_TILE_MAX_DIMS];
    uint64_t offset, bytes, data_hash, record_hash;
};
typedef struct app_tile_record app_tile_record;

/* The geometry a journal is read against, and what reading fills. */
typedef struct app_tile_journal_read {
    const tess_tile_job *job;
    uint64_t identity_hash;
    uint8_t *out;     /* the whole output to fill, or NULL (ranks other than 0) */
    uint8_t *done;    /* a bit per cell, zeroed by the caller */
    uint64_t records; /* valid records */
} app_tile_journal_read;

/* Seal a record: magic and record_hash. */
void app_tile_record_seal(app_tile_record *r);
/* Read DIR's journal and outputs into *j.  0; 1 when there is no journal;
 * -1 with why (one line) when it or the outputs it names are damaged. */
int app_tile_journal_load(const char *dir, app_tile_journal_read *j, char *why, size_t whylen);
/* DIR's identity text (theirs) against this run's: 0 when they are the
 * same, else -1 with one line in why naming the first line that differs
 * ("KEY THEIRS there, OURS here"; control characters shown as '?'). */
int app_tile_identity_compare(const char *theirs, const char *ours, char *why, size_t cap);
/* Copy a box's output (row-major within the box) into the whole area's. */
void app_tile_box_place(const tess_tile_job *job, const tess_tile_box *box, const void *in,
                        uint8_t *whole);
/* Cells of the area. */
uint64_t app_tile_area_cells(const tess_tile_job *job);

#endif
