/*
 * accum.c — built-in and user accumulators.  Built-ins work element by
 * element; the operation is chosen once per call (a switch outside the
 * loop), so the hot loop of tess__accum_apply_dense is a plain typed loop.
 * Integer sums and products wrap around modulo 2^n (computed unsigned, no UB).
 */
#include <float.h>
#include <math.h>
#include <string.h>
#include "accum.h"

static size_t elem_size(tess_elem e)
{
    switch (e) {
    case TESS_I32:
    case TESS_F32: return 4;
    case TESS_I64:
    case TESS_F64: return 8;
    default: return 0;
    }
}

int tess__accum_check(tess_accum kind, tess_elem elem, size_t value_size, const char **why)
{
    if (kind == TESS_ACC_REPLACE) return TESS_OK;
    if (kind == TESS_ACC_USER) {
        if (value_size == 0) *why = "user accumulators need fixed-size values";
        return value_size ? TESS_OK : TESS_ERR_INVAL;
    }
    if (kind < TESS_ACC_REPLACE || kind > TESS_ACC_USER) *why = "unknown accumulator";
    else if (elem_size(elem) == 0) *why = "sum/min/max/product need an element type";
    else if (value_size == 0 || value_size % elem_size(elem) != 0)
        *why = "value_size must be a non-zero multiple of the element size";
    else return TESS_OK;
    return TESS_ERR_INVAL;
}

void tess__accum_setup(tess__accum *a, tess_accum kind, tess_elem elem, size_t value_size,
                       const tess_accum_ops *user)
{
    memset(a, 0, sizeof *a);
    a->kind = kind;
    a->elem = elem;
    a->value_size = value_size;
    if (user != NULL) a->user = *user;
}

#define FILL(T, v)                                                              \
    do {                                                                        \
        T *x_ = value;                                                          \
        for (size_t i_ = 0; i_ < a->value_size / sizeof(T); i_++) x_[i_] = (v); \
    } while (0)

static void identity_min_max(const tess__accum *a, void *value, int is_min)
{
    switch (a->elem) {
    case TESS_I32: FILL(int32_t, is_min ? INT32_MAX : INT32_MIN); break;
    case TESS_I64: FILL(int64_t, is_min ? INT64_MAX : INT64_MIN); break;
    case TESS_F32: FILL(float, is_min ? INFINITY : -INFINITY); break;
    case TESS_F64: FILL(double, is_min ? INFINITY : -INFINITY); break;
    default: break;
    }
}

static void identity_one(const tess__accum *a, void *value)
{
    switch (a->elem) {
    case TESS_I32: FILL(int32_t, 1); break;
    case TESS_I64: FILL(int64_t, 1); break;
    case TESS_F32: FILL(float, 1.0f); break;
    case TESS_F64: FILL(double, 1.0); break;
    default: break;
    }
}

void tess__accum_identity(const tess__accum *a, void *value)
{
    switch (a->kind) {
    case TESS_ACC_MIN: identity_min_max(a, value, 1); break;
    case TESS_ACC_MAX: identity_min_max(a, value, 0); break;
    case TESS_ACC_PRODUCT: identity_one(a, value); break;
    case TESS_ACC_USER:
        if (a->user.initialize) a->user.initialize(value, a->value_size);
        else memset(value, 0, a->value_size);
        break;
    default: memset(value, 0, a->value_size); break;
    }
}

/* One element-wise loop per (operation, type); U is the unsigned twin for wrap-around. */
#define LOOP(T, U, OP)                                              \
    do {                                                            \
        T *x_ = value;                                              \
        const T *y_ = update;                                       \
        for (size_t i_ = 0; i_ < n; i_++) OP(T, U, x_[i_], y_[i_]); \
    } while (0)
#define OP_SUM(T, U, x, y) x = (T)((U)(x) + (U)(y))
#define OP_PROD(T, U, x, y) x = (T)((U)(x) * (U)(y))
/* MIN and MAX count in `ch_` the elements they changed (tess_table_changes). */
#define OP_MIN(T, U, x, y) \
    if ((y) < (x)) x = (y), ch_++
#define OP_MAX(T, U, x, y) \
    if ((y) > (x)) x = (y), ch_++
#define OP_FSUM(T, U, x, y) x = (x) + (y)
#define OP_FPROD(T, U, x, y) x = (x) * (y)

#define BY_ELEM(ISUM, FSUM)                              \
    switch (a->elem) {                                   \
    case TESS_I32: LOOP(int32_t, uint32_t, ISUM); break; \
    case TESS_I64: LOOP(int64_t, uint64_t, ISUM); break; \
    case TESS_F32: LOOP(float, float, FSUM); break;      \
    case TESS_F64: LOOP(double, double, FSUM); break;    \
    default: break;                                      \
    }

static int apply_builtin(const tess__accum *a, void *value, const void *update)
{
    size_t n = a->value_size / (elem_size(a->elem) ? elem_size(a->elem) : 1), ch_ = 0;
    switch (a->kind) {
    case TESS_ACC_SUM: BY_ELEM(OP_SUM, OP_FSUM); break;
    case TESS_ACC_PRODUCT: BY_ELEM(OP_PROD, OP_FPROD); break;
    case TESS_ACC_MIN: BY_ELEM(OP_MIN, OP_MIN); break;
    case TESS_ACC_MAX: BY_ELEM(OP_MAX, OP_MAX); break;
    default: memcpy(value, update, a->value_size); break;
    }
    return ch_ > 0;
}

int tess__accum_apply(const tess__accum *a, void *value, const void *update)
{
    if (a->kind != TESS_ACC_USER) return apply_builtin(a, value, update);
    a->user.accumulate(value, update, a->value_size);
    return 0;
}

int tess__accum_counts_changes(tess_accum kind)
{
    return kind == TESS_ACC_MIN || kind == TESS_ACC_MAX;
}

void tess__accum_merge(const tess__accum *a, void *pending, const void *later)
{
    if (a->kind == TESS_ACC_USER && a->user.merge) a->user.merge(pending, later, a->value_size);
    else tess__accum_apply(a, pending, later);
}

void tess__accum_view(const tess__accum *a, void *out, const void *value)
{
    if (a->kind == TESS_ACC_USER && a->user.view) a->user.view(out, value, a->value_size);
    else memcpy(out, value, a->value_size);
}

static void set_bits(uint8_t *bits, uint64_t first, const uint64_t *keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t k = keys[i] - first;
        bits[k >> 3] |= (uint8_t)(1u << (k & 7));
    }
}

/*
 * The typed loops of tess__accum_apply_dense, one per (operation, element
 * type), each taking m elements per value.  Single-element values get their
 * own loop so the PageRank case (f64 sum) is exactly `base[k - first] += u[i]`.
 * restrict: the compiler need not reload keys after each store into base
 * (int64_t and uint64_t may alias otherwise).
 */
typedef size_t dense_loop_fn(void *base, uint64_t first, const uint64_t *keys, const void *updates,
                             size_t n, size_t m);

/* Each returns the values it changed (MIN and MAX count; the others never
 * touch ch_, and the compiler drops the counting from their loops). */
#define DENSE_LOOP(NAME, T, U, OP)                                                \
    static size_t NAME(void *base, uint64_t first, const uint64_t *restrict keys, \
                       const void *updates, size_t n, size_t m)                   \
    {                                                                             \
        T *restrict x = base;                                                     \
        const T *restrict y = updates;                                            \
        size_t ch_ = 0, changed = 0;                                              \
        if (m == 1) {                                                             \
            for (size_t i = 0; i < n; i++) OP(T, U, x[keys[i] - first], y[i]);    \
            return ch_;                                                           \
        }                                                                         \
        for (size_t i = 0; i < n; i++) {                                          \
            T *v = x + (keys[i] - first) * m;                                     \
            size_t before = ch_;                                                  \
            for (size_t j = 0; j < m; j++) OP(T, U, v[j], y[i * m + j]);          \
            changed += ch_ != before;                                             \
        }                                                                         \
        return changed;                                                           \
    }

#define DENSE_LOOPS(NAME, IOP, FOP)                        \
    DENSE_LOOP(dense_##NAME##_i32, int32_t, uint32_t, IOP) \
    DENSE_LOOP(dense_##NAME##_i64, int64_t, uint64_t, IOP) \
    DENSE_LOOP(dense_##NAME##_f32, float, float, FOP)      \
    DENSE_LOOP(dense_##NAME##_f64, double, double, FOP)

DENSE_LOOPS(sum, OP_SUM, OP_FSUM)
DENSE_LOOPS(prod, OP_PROD, OP_FPROD)
DENSE_LOOPS(min, OP_MIN, OP_MIN)
DENSE_LOOPS(max, OP_MAX, OP_MAX)

#define ROW(NAME)                                                                            \
    {                                                                                        \
        NULL, dense_##NAME##_i32, dense_##NAME##_i64, dense_##NAME##_f32, dense_##NAME##_f64 \
    }
static dense_loop_fn *const dense_loops[][5] = {
    [TESS_ACC_SUM] = ROW(sum),
    [TESS_ACC_MIN] = ROW(min),
    [TESS_ACC_MAX] = ROW(max),
    [TESS_ACC_PRODUCT] = ROW(prod),
};

/* Replace copies whole values whatever their element type. */
static void dense_replace(uint8_t *base, uint64_t first, const uint64_t *keys,
                          const uint8_t *updates, size_t n, size_t vs)
{
    for (size_t i = 0; i < n; i++) memcpy(base + (keys[i] - first) * vs, updates + i * vs, vs);
}

static void dense_user(const tess__accum *a, uint8_t *base, uint64_t first, const uint64_t *keys,
                       const uint8_t *updates, size_t n)
{
    size_t vs = a->value_size;
    for (size_t i = 0; i < n; i++)
        a->user.accumulate(base + (keys[i] - first) * vs, updates + i * vs, vs);
}

size_t tess__accum_apply_dense(const tess__accum *a, void *base, uint64_t first,
                               const uint64_t *keys, const void *updates, size_t n,
                               uint8_t *present_bits)
{
    size_t vs = a->value_size, es = elem_size(a->elem), changed = 0;
    if (vs == 0) return 0; /* variable-length values never take the dense path */
    if (a->kind == TESS_ACC_USER) dense_user(a, base, first, keys, updates, n);
    else if (a->kind == TESS_ACC_REPLACE || es == 0)
        dense_replace(base, first, keys, updates, n, vs);
    else changed = dense_loops[a->kind][a->elem](base, first, keys, updates, n, vs / es);
    if (present_bits != NULL) set_bits(present_bits, first, keys, n);
    return changed;
}
