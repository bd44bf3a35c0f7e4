/*
 * accum.h — accumulators: how an update combines into a stored value.
 * Built-in kinds work element by element over values of value_size bytes
 * (value_size a multiple of the element size); a user accumulator brings the
 * paper's four functions.  Private to the library.
 */
#ifndef TESS_SRC_TABLE_ACCUM_H
#define TESS_SRC_TABLE_ACCUM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "tessera/tessera.h"

typedef struct tess__accum {
    tess_accum kind;
    tess_elem elem;
    size_t value_size;   /* 0 for variable-length values (replace only) */
    tess_accum_ops user; /* kind == TESS_ACC_USER */
    /* The table's count of stored values an update changed (MIN and MAX;
     * tess_table_changes).  Partitions copy the accumulator, so every
     * partition of a table adds to its table's one counter, wherever it was
     * created; NULL counts nothing. */
    _Atomic uint64_t *changes;
} tess__accum;

/* Check that kind/elem/value_size make sense; 0 or TESS_ERR_INVAL with a reason in why. */
int tess__accum_check(tess_accum kind, tess_elem elem, size_t value_size, const char **why);

/* Fill *a; user ops may be NULL unless kind == TESS_ACC_USER. */
void tess__accum_setup(tess__accum *a, tess_accum kind, tess_elem elem, size_t value_size,
                       const tess_accum_ops *user);

/* Value of a key whose first write is an update: the identity of the
 * operation (0 for sum, 1 for product, +inf/INT_MAX for min, -inf/INT_MIN for
 * max, zeros for replace) or the user's initialize. */
void tess__accum_identity(const tess__accum *a, void *value);

/* value := value (+) update; 1 when a MIN or MAX changed the value, else 0. */
int tess__accum_apply(const tess__accum *a, void *value, const void *update);

/* 1 when the accumulator counts the values its updates change (MIN, MAX). */
int tess__accum_counts_changes(tess_accum kind);

/* Two pending updates: a := a (+) b (b issued later).  For built-ins the same
 * operation as apply; for replace, b wins. */
void tess__accum_merge(const tess__accum *a, void *pending, const void *later);

/* out := what get returns for stored value (copy for built-ins). */
void tess__accum_view(const tess__accum *a, void *out, const void *value);

/*
 * Fast path: apply n updates to a flat array `base` whose index 0 is key
 * `first` (keys are uint64_t, all inside the array).  The operation is chosen
 * once per call, not per element.  If present_bits is not NULL the bit of
 * each key's index is set (bit i of byte i/8, LSB first).  Returns how many
 * updates changed a value (MIN and MAX; 0 for the other kinds).
 */
size_t tess__accum_apply_dense(const tess__accum *a, void *base, uint64_t first,
                               const uint64_t *keys, const void *updates, size_t n,
                               uint8_t *present_bits);

#endif
