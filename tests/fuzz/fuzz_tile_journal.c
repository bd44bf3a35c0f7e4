/*
 * fuzz_tile_journal.c — libFuzzer target for the reader of a tiles
 * checkpoint (`--restore` of blackscholes, sar, texture;
 * apps/common/tile_journal.c app_tile_journal_load): tiles.journal and the
 * tiles.data it points into, read against a job's area.  The first bytes
 * choose the area (1..4 dimensions of 1..8 cells, 1..4 output bytes per
 * cell), how the rest is cut into journal and data, and what the target
 * repairs before reading: the header's identity, each record's output
 * checksum and its seal (else nearly every mutation would stop at a
 * checksum).  Damage must be refused with one line, never a crash or a
 * read out of bounds; what is read must be exactly what an independent
 * model of docs/checkpoints.md reads: every sealed record in the area and
 * the data file, output checksum matching, a failing last record left out
 * as a torn append — the same verdict, the same count of records, the same
 * cells marked done and the same output placed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt_cli.h"
#include "tile_journal.h"

#define IDENTITY 0x7e55e7a11dULL
#define REC sizeof(app_tile_record)

typedef struct area {
    tess_tile_job job;
    uint64_t cells;
} area;

/* The model's reading of one record: 1 fits and matches its output, 0 not. */
static int model_good(const area *a, const app_tile_record *r, const uint8_t *data, size_t dlen)
{
    app_tile_record sealed = *r;
    app_tile_record_seal(&sealed);
    if (memcmp(&sealed, r, REC) != 0 || r->ndims != (uint32_t)a->job.ndims) return 0;
    uint64_t cells = 1;
    for (int d = 0; d < a->job.ndims; d++) {
        if (!(0 <= r->lo[d] && r->lo[d] < r->hi[d] && r->hi[d] <= a->job.extent[d])) return 0;
        cells *= (uint64_t)(r->hi[d] - r->lo[d]);
    }
    if (r->bytes != cells * a->job.out_bytes || r->offset > dlen || r->bytes > dlen - r->offset)
        return 0;
    return app_hash_bytes(0, data + r->offset, r->bytes) == r->data_hash;
}

/* Cell by cell, the record's box marked and its output placed. */
static void model_take(const area *a, const app_tile_record *r, const uint8_t *data, uint8_t *done,
                       uint8_t *out)
{
    int nd = a->job.ndims;
    size_t ob = a->job.out_bytes;
    int64_t idx[TESS_TILE_MAX_DIMS];
    for (int d = 0; d < nd; d++) idx[d] = r->lo[d];
    for (uint64_t k = 0;; k++) {
        uint64_t cell = 0;
        for (int d = 0; d < nd; d++) cell = cell * (uint64_t)a->job.extent[d] + (uint64_t)idx[d];
        done[cell / 8] |= (uint8_t)(1u << (cell % 8));
        memcpy(out + cell * ob, data + r->offset + k * ob, ob);
        int d = nd - 1;
        while (d >= 0 && ++idx[d] == r->hi[d]) idx[d] = r->lo[d], d--;
        if (d < 0) return;
    }
}

/* The model's verdict: 0 with *records, done and out filled, or -1. */
static int model(const area *a, const uint8_t *jr, size_t jlen, const uint8_t *data, size_t dlen,
                 uint64_t *records, uint8_t *done, uint8_t *out)
{
    uint64_t h;
    if (jlen < APP_TILE_JOURNAL_HEADER || memcmp(jr, APP_TILE_JOURNAL_MAGIC, 8) != 0) return -1;
    memcpy(&h, jr + 8, 8);
    if (h != IDENTITY) return -1;
    size_t n = (jlen - APP_TILE_JOURNAL_HEADER) / REC;
    *records = 0;
    for (size_t i = 0; i < n; i++) {
        app_tile_record r, sealed;
        memcpy(&r, jr + APP_TILE_JOURNAL_HEADER + i * REC, REC);
        sealed = r;
        app_tile_record_seal(&sealed);
        if (memcmp(&sealed, &r, REC) != 0 && i + 1 == n) break; /* a torn append */
        if (!model_good(a, &r, data, dlen)) return -1;
        model_take(a, &r, data, done, out);
        ++*records;
    }
    return 0;
}

/* Repairs the flags ask for: identity (1), output checksums (2), seals (4). */
static void repair(uint8_t flags, uint8_t *jr, size_t jlen, const uint8_t *data, size_t dlen)
{
    if ((flags & 1) && jlen >= APP_TILE_JOURNAL_HEADER) {
        uint64_t h = IDENTITY;
        memcpy(jr, APP_TILE_JOURNAL_MAGIC, 8);
        memcpy(jr + 8, &h, 8);
    }
    for (size_t at = APP_TILE_JOURNAL_HEADER; at + REC <= jlen; at += REC) {
        app_tile_record r;
        memcpy(&r, jr + at, REC);
        if ((flags & 2) && r.offset <= dlen && r.bytes <= dlen - r.offset)
            r.data_hash = app_hash_bytes(0, data + r.offset, r.bytes);
        if (flags & 4) app_tile_record_seal(&r);
        memcpy(jr + at, &r, REC);
    }
}

static int write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL) return -1;
    int ok = fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static char dir[64];

static void remove_dir(void)
{
    char path[96];
    snprintf(path, sizeof path, "%s/" APP_TILE_JOURNAL, dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/" APP_TILE_DATA, dir);
    unlink(path);
    rmdir(dir);
}

/* The bytes as files in a directory of this process, or NULL. */
static const char *as_dir(const uint8_t *jr, size_t jlen, const uint8_t *data, size_t dlen)
{
    static char path[96];
    if (dir[0] == '\0') { /* memory-backed when there is /dev/shm */
        snprintf(dir, sizeof dir, "%s/fuzz_tile_journal.%ld",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (long)getpid());
        if (mkdir(dir, 0700) != 0) return dir[0] = '\0', NULL;
        atexit(remove_dir);
    }
    snprintf(path, sizeof path, "%s/" APP_TILE_JOURNAL, dir);
    if (write_file(path, jr, jlen) != 0) return NULL;
    snprintf(path, sizeof path, "%s/" APP_TILE_DATA, dir);
    return write_file(path, data, dlen) == 0 ? dir : NULL;
}

static void check(const area *a, const uint8_t *jr, size_t jlen, const uint8_t *data, size_t dlen)
{
    const char *dir = as_dir(jr, jlen, data, dlen);
    if (dir == NULL) return;
    size_t out_len = a->cells * a->job.out_bytes, done_len = a->cells / 8 + 1;
    uint8_t *out = calloc(2, out_len), *done = calloc(2, done_len);
    if (out == NULL || done == NULL) goto end;
    app_tile_journal_read j = {.job = &a->job, .identity_hash = IDENTITY, .out = out, .done = done};
    char why[512] = "";
    int rc = app_tile_journal_load(dir, &j, why, sizeof why);
    uint64_t want_records = 0;
    int want = model(a, jr, jlen, data, dlen, &want_records, done + done_len, out + out_len);
    if (rc != want) __builtin_trap();
    if (rc != 0 && (why[0] == '\0' || strchr(why, '\n') != NULL)) __builtin_trap();
    if (rc == 0 && (j.records != want_records || memcmp(done, done + done_len, done_len) != 0 ||
                    memcmp(out, out + out_len, out_len) != 0))
        __builtin_trap();
end:
    free(out);
    free(done);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4 || size > (1u << 16)) return 0;
    area a;
    memset(&a, 0, sizeof a);
    a.job.ndims = 1 + (data[0] & 3);
    a.job.out_bytes = 1 + ((data[0] >> 2) & 3);
    a.cells = 1;
    for (int d = 0; d < a.job.ndims; d++) {
        a.job.extent[d] = 1 + ((data[1] >> (2 * d)) & 3) + 4 * ((data[2] >> d) & 1);
        a.cells *= (uint64_t)a.job.extent[d];
    }
    uint8_t flags = data[3];
    data += 4, size -= 4;
    /* the journal: a header and records, its length from the flags' top bits */
    size_t jlen = APP_TILE_JOURNAL_HEADER + (size_t)(flags >> 3) * REC / 4;
    if (jlen > size) jlen = size;
    uint8_t *jr = malloc(jlen ? jlen : 1);
    if (jr == NULL) return 0;
    memcpy(jr, data, jlen);
    repair(flags, jr, jlen, data + jlen, size - jlen);
    check(&a, jr, jlen, data + jlen, size - jlen);
    free(jr);
    return 0;
}
