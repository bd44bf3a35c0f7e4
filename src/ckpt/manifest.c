/*
 * manifest.c — encoding and strict decoding of a checkpoint MANIFEST.
 *
 * Layout (little-endian; docs/checkpoint-format.md is the reference):
 *   "TESSCKPT" u32 version u32 flags(0) u64 fingerprint u64 epoch
 *   u32 ntables, per table: u32 id u32 flags(bit 0 static) u32 nparts u32 owner[nparts]
 *   u32 nfiles,  per file:  u8 kind u8 in_static u16 0 u32 a u32 b u64 size u64 raw u64 xxh64
 *   u32 user_len, user bytes
 *   u64 XXH64 of every byte before it
 * The decoder checks every count against the bytes left before allocating,
 * and rejects anything the encoder would not have written (unsorted entries,
 * reserved bits, trailing bytes), which keeps the format canonical.
 */
#include "ckpt/manifest.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "core/bytes.h"
#include "tessera/tessera.h"

#define HEADER_BYTES 36u /* magic .. ntables */
#define TABLE_BYTES 12u  /* without owners */
#define FILE_BYTES 36u

void tess__ckpt_file_name(const tess__ckpt_file *f, char *buf, size_t buflen)
{
    if (f->kind == TESS__CKPT_FILE_LOG) snprintf(buf, buflen, "log-%" PRIu32 ".zst", f->a);
    else snprintf(buf, buflen, "t%" PRIu32 "-p%" PRIu32 ".zst", f->a, f->b);
}

/* ---------------------------------------------------------------- lookup */

const tess__ckpt_table_map *tess__ckpt_manifest_table(const tess__ckpt_manifest *m, uint32_t table)
{
    uint32_t lo = 0, hi = m->ntables;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (m->tables[mid].table == table) return &m->tables[mid];
        if (m->tables[mid].table < table) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

static int file_cmp(const tess__ckpt_file *x, uint8_t kind, uint32_t a, uint32_t b)
{
    if (x->kind != kind) return x->kind < kind ? -1 : 1;
    if (x->a != a) return x->a < a ? -1 : 1;
    if (x->b != b) return x->b < b ? -1 : 1;
    return 0;
}

const tess__ckpt_file *tess__ckpt_manifest_file(const tess__ckpt_manifest *m, uint8_t kind,
                                                uint32_t a, uint32_t b)
{
    uint32_t lo = 0, hi = m->nfiles;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = file_cmp(&m->files[mid], kind, a, b);
        if (c == 0) return &m->files[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

/* ---------------------------------------------------------------- checks */

static int table_sort_cmp(const void *x, const void *y)
{
    uint32_t a = ((const tess__ckpt_table_map *)x)->table;
    uint32_t b = ((const tess__ckpt_table_map *)y)->table;
    return (a > b) - (a < b);
}

static int file_sort_cmp(const void *x, const void *y)
{
    const tess__ckpt_file *b = y;
    return file_cmp(x, b->kind, b->a, b->b);
}

static int validate_tables(const tess__ckpt_manifest *m, const char *name, char *err, size_t errlen)
{
    for (uint32_t i = 0; i < m->ntables; i++) {
        const tess__ckpt_table_map *t = &m->tables[i];
        if (i > 0 && t->table <= m->tables[i - 1].table) {
            snprintf(err, errlen, "%s: table %" PRIu32 " listed twice or out of order", name,
                     t->table);
            return TESS_ERR_FORMAT;
        }
        if (t->nparts == 0 || t->nparts > TESS__CKPT_MAX_PARTS) {
            snprintf(err, errlen, "%s: table %" PRIu32 " has %" PRIu32 " partitions", name,
                     t->table, t->nparts);
            return TESS_ERR_FORMAT;
        }
        for (uint32_t p = 0; p < t->nparts; p++) {
            if (t->owners[p] < 0) {
                snprintf(err, errlen,
                         "%s: table %" PRIu32 " partition %" PRIu32 " has owner rank %" PRId32,
                         name, t->table, p, t->owners[p]);
                return TESS_ERR_FORMAT;
            }
        }
    }
    return TESS_OK;
}

static int validate_file(const tess__ckpt_manifest *m, const tess__ckpt_file *f)
{
    if (f->kind == TESS__CKPT_FILE_LOG) return f->b == 0 && f->in_static == 0;
    if (f->kind != TESS__CKPT_FILE_PARTITION) return 0;
    const tess__ckpt_table_map *t = tess__ckpt_manifest_table(m, f->a);
    return t != NULL && f->b < t->nparts && (f->in_static != 0) == (t->is_static != 0);
}

static int validate(const tess__ckpt_manifest *m, const char *name, char *err, size_t errlen)
{
    int rc = validate_tables(m, name, err, errlen);
    if (rc != TESS_OK) return rc;
    for (uint32_t i = 0; i < m->nfiles; i++) {
        const tess__ckpt_file *f = &m->files[i];
        char fname[64];
        tess__ckpt_file_name(f, fname, sizeof fname);
        if (i > 0 && file_sort_cmp(&m->files[i - 1], f) >= 0) {
            snprintf(err, errlen, "%s: file %s listed twice or out of order", name, fname);
            return TESS_ERR_FORMAT;
        }
        if (!validate_file(m, f)) {
            snprintf(err, errlen, "%s: file %s does not match the partition map", name, fname);
            return TESS_ERR_FORMAT;
        }
    }
    return TESS_OK;
}

int tess__ckpt_manifest_check(tess__ckpt_manifest *m, char *err, size_t errlen)
{
    if (m->ntables > TESS__CKPT_MAX_TABLES) {
        snprintf(err, errlen, "MANIFEST: %" PRIu32 " tables (limit %u)", m->ntables,
                 TESS__CKPT_MAX_TABLES);
        return TESS_ERR_INVAL;
    }
    if (m->ntables > 1) qsort(m->tables, m->ntables, sizeof *m->tables, table_sort_cmp);
    if (m->nfiles > 1) qsort(m->files, m->nfiles, sizeof *m->files, file_sort_cmp);
    return validate(m, "MANIFEST", err, errlen) == TESS_OK ? TESS_OK : TESS_ERR_INVAL;
}

/* ---------------------------------------------------------------- encode */

static size_t encoded_size(const tess__ckpt_manifest *m)
{
    size_t n = HEADER_BYTES + 4 + (size_t)m->nfiles * FILE_BYTES + 4 + m->user_len + 8;
    for (uint32_t i = 0; i < m->ntables; i++) n += TABLE_BYTES + 4 * (size_t)m->tables[i].nparts;
    return n;
}

static uint8_t *encode_file(uint8_t *p, const tess__ckpt_file *f)
{
    *p++ = f->kind;
    *p++ = f->in_static;
    *p++ = 0;
    *p++ = 0;
    p = tess__emit_le32(p, f->a);
    p = tess__emit_le32(p, f->b);
    p = tess__emit_le64(p, f->size);
    p = tess__emit_le64(p, f->raw_size);
    return tess__emit_le64(p, f->xxh64);
}

int tess__ckpt_manifest_encode(const tess__ckpt_manifest *m, uint8_t **buf_out, size_t *len_out)
{
    size_t len = encoded_size(m);
    uint8_t *buf = malloc(len), *p = buf;
    if (buf == NULL) return TESS_ERR_NOMEM;
    memcpy(p, TESS__CKPT_MAGIC, 8);
    p = tess__emit_le32(p + 8, TESS__CKPT_VERSION);
    p = tess__emit_le32(p, 0);
    p = tess__emit_le64(p, m->fingerprint);
    p = tess__emit_le64(p, m->epoch);
    p = tess__emit_le32(p, m->ntables);
    for (uint32_t i = 0; i < m->ntables; i++) {
        const tess__ckpt_table_map *t = &m->tables[i];
        p = tess__emit_le32(p, t->table);
        p = tess__emit_le32(p, t->is_static ? 1u : 0u);
        p = tess__emit_le32(p, t->nparts);
        for (uint32_t k = 0; k < t->nparts; k++) p = tess__emit_le32(p, (uint32_t)t->owners[k]);
    }
    p = tess__emit_le32(p, m->nfiles);
    for (uint32_t i = 0; i < m->nfiles; i++) p = encode_file(p, &m->files[i]);
    p = tess__emit_le32(p, m->user_len);
    if (m->user_len > 0) memcpy(p, m->user, m->user_len);
    p += m->user_len;
    tess__emit_le64(p, XXH64(buf, len - 8, 0));
    *buf_out = buf;
    *len_out = len;
    return TESS_OK;
}

/* ---------------------------------------------------------------- decode */

/* The decoder reads through core/bytes.h's bounds-checked reader: every
 * take fails once the input is exhausted. */

static int decode_header(tess__reader *c, const char *name, tess__ckpt_manifest *m, char *err,
                         size_t errlen)
{
    uint32_t version, flags;
    if (c->left < 8 || memcmp(c->p, TESS__CKPT_MAGIC, 8) != 0) {
        snprintf(err, errlen, "%s: not a tessera checkpoint manifest (bad magic)", name);
        return TESS_ERR_FORMAT;
    }
    c->p += 8;
    c->left -= 8;
    if (!tess__take_le32(c, &version) || !tess__take_le32(c, &flags) ||
        !tess__take_le64(c, &m->fingerprint) || !tess__take_le64(c, &m->epoch) ||
        !tess__take_le32(c, &m->ntables)) {
        snprintf(err, errlen, "%s: truncated header", name);
        return TESS_ERR_FORMAT;
    }
    if (version != TESS__CKPT_VERSION) {
        snprintf(err, errlen, "%s: format version %" PRIu32 " not supported (this build reads %u)",
                 name, version, TESS__CKPT_VERSION);
        return TESS_ERR_FORMAT;
    }
    if (flags != 0) {
        snprintf(err, errlen, "%s: unknown header flags 0x%" PRIx32, name, flags);
        return TESS_ERR_FORMAT;
    }
    return TESS_OK;
}

static int decode_table(tess__reader *c, tess__ckpt_table_map *t)
{
    uint32_t flags;
    if (!tess__take_le32(c, &t->table) || !tess__take_le32(c, &flags) ||
        !tess__take_le32(c, &t->nparts) || flags > 1)
        return 0;
    t->is_static = (int)flags;
    if (t->nparts == 0 || t->nparts > TESS__CKPT_MAX_PARTS || c->left / 4 < t->nparts) return 0;
    t->owners = malloc(sizeof *t->owners * t->nparts);
    if (t->owners == NULL) return -1;
    for (uint32_t k = 0; k < t->nparts; k++) {
        uint32_t v = 0;
        tess__take_le32(c, &v);
        if (v > INT32_MAX) return 0;
        t->owners[k] = (int32_t)v;
    }
    return 1;
}

static int decode_tables(tess__reader *c, const char *name, tess__ckpt_manifest *m, char *err,
                         size_t errlen)
{
    if (m->ntables > TESS__CKPT_MAX_TABLES || c->left / TABLE_BYTES < m->ntables) {
        snprintf(err, errlen, "%s: table count %" PRIu32 " exceeds the file", name, m->ntables);
        return TESS_ERR_FORMAT;
    }
    m->tables = calloc(m->ntables ? m->ntables : 1, sizeof *m->tables);
    if (m->tables == NULL) return TESS_ERR_NOMEM;
    for (uint32_t i = 0; i < m->ntables; i++) {
        int ok = decode_table(c, &m->tables[i]);
        if (ok < 0) return TESS_ERR_NOMEM;
        if (ok == 0) {
            snprintf(err, errlen, "%s: malformed partition map of table entry %" PRIu32, name, i);
            return TESS_ERR_FORMAT;
        }
    }
    return TESS_OK;
}

static void decode_file(tess__reader *c, tess__ckpt_file *f, int *reserved_ok)
{
    f->kind = c->p[0];
    f->in_static = c->p[1];
    *reserved_ok = c->p[2] == 0 && c->p[3] == 0;
    c->p += 4;
    c->left -= 4;
    tess__take_le32(c, &f->a);
    tess__take_le32(c, &f->b);
    tess__take_le64(c, &f->size);
    tess__take_le64(c, &f->raw_size);
    tess__take_le64(c, &f->xxh64);
}

static int decode_files(tess__reader *c, const char *name, tess__ckpt_manifest *m, char *err,
                        size_t errlen)
{
    if (!tess__take_le32(c, &m->nfiles) || c->left / FILE_BYTES < m->nfiles) {
        snprintf(err, errlen, "%s: file list exceeds the file", name);
        return TESS_ERR_FORMAT;
    }
    m->files = calloc(m->nfiles ? m->nfiles : 1, sizeof *m->files);
    if (m->files == NULL) return TESS_ERR_NOMEM;
    for (uint32_t i = 0; i < m->nfiles; i++) {
        int reserved_ok;
        decode_file(c, &m->files[i], &reserved_ok);
        if (!reserved_ok) {
            snprintf(err, errlen, "%s: reserved bytes set in file entry %" PRIu32, name, i);
            return TESS_ERR_FORMAT;
        }
    }
    return TESS_OK;
}

static int decode_user(tess__reader *c, const char *name, tess__ckpt_manifest *m, char *err,
                       size_t errlen)
{
    if (!tess__take_le32(c, &m->user_len) || c->left != (size_t)m->user_len + 8) {
        snprintf(err, errlen, "%s: user data length does not match the file size", name);
        return TESS_ERR_FORMAT;
    }
    if (m->user_len > 0) {
        m->user = malloc(m->user_len);
        if (m->user == NULL) return TESS_ERR_NOMEM;
        memcpy(m->user, c->p, m->user_len);
    }
    return TESS_OK;
}

static int decode_body(tess__reader *c, const char *name, tess__ckpt_manifest *m, char *err,
                       size_t errlen)
{
    int rc = decode_header(c, name, m, err, errlen);
    if (rc == TESS_OK) rc = decode_tables(c, name, m, err, errlen);
    if (rc == TESS_OK) rc = decode_files(c, name, m, err, errlen);
    if (rc == TESS_OK) rc = decode_user(c, name, m, err, errlen);
    if (rc == TESS_OK) rc = validate(m, name, err, errlen);
    if (rc == TESS_ERR_NOMEM) snprintf(err, errlen, "%s: out of memory", name);
    return rc;
}

int tess__ckpt_manifest_decode(const char *name, const uint8_t *buf, size_t len,
                               tess__ckpt_manifest *m_out, char *err, size_t errlen)
{
    tess__ckpt_manifest m;
    memset(&m, 0, sizeof m);
    memset(m_out, 0, sizeof *m_out);
    if (len < HEADER_BYTES + 4 + 4 + 8) {
        snprintf(err, errlen, "%s: truncated (%zu bytes)", name, len);
        return TESS_ERR_FORMAT;
    }
    uint64_t stored = 0;
    for (int i = 0; i < 8; i++) stored |= (uint64_t)buf[len - 8 + i] << (8 * i);
    if (XXH64(buf, len - 8, 0) != stored) {
        snprintf(err, errlen, "%s: checksum mismatch (corrupt or truncated)", name);
        return TESS_ERR_FORMAT;
    }
    tess__reader c = {buf, len};
    int rc = decode_body(&c, name, &m, err, errlen);
    if (rc != TESS_OK) {
        tess__ckpt_manifest_free(&m);
        return rc;
    }
    *m_out = m;
    return TESS_OK;
}

void tess__ckpt_manifest_free(tess__ckpt_manifest *m)
{
    if (m == NULL) return;
    for (uint32_t i = 0; m->tables != NULL && i < m->ntables; i++) free(m->tables[i].owners);
    free(m->tables);
    free(m->files);
    free(m->user);
    memset(m, 0, sizeof *m);
}
