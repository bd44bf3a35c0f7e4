/*
 * width.c — the WIDTH bookkeeping of computational replication (the SoCC
 * 2011 paper's Algorithm 3; docs/ticks.md, "Lazy replication").
 *
 * A version v that holds every tuple of L_w(Q_i) = hold^w(Q_i) has *width*
 * w; -1 means it does not hold even Q_i.  Stepping L_w at v reads L_{w+1}
 * at v-1, so widths drop by at least one per tick after the *base*, the
 * newest round whose tuples arrived from every neighbour, which has width W
 * (= m+1).  A version is *full* at its standard width k - s, s in 1..k its
 * place in its round (0 at a round start): what stepping on to the next
 * round start reads.  std(x) + x is the first round start at or after x,
 * R(x), so making g full needs width R(g) - v at every v in (base, g]: within
 * reach while R(g) - base <= W.  Past the next round start this is
 * replication ahead of late messages, which the process loop asks for only
 * while it would otherwise wait.
 */
#include "tick/tick_internal.h"

int tess__tick_width_std(const tick_widths *t, int64_t v)
{
    int64_t s = (v - t->epoch_start - 1) % t->k + 1;
    return (int)(t->k - s);
}

int64_t tess__tick_width_round_at_or_after(const tick_widths *t, int64_t v)
{
    return v + tess__tick_width_std(t, v);
}

int tess__tick_width_next(const tick_widths *t, int64_t goal, int (*width_of)(void *, int64_t),
                          void *arg, int64_t *v_out, int *width_out)
{
    if (t->base < 0 || goal <= t->base) return 0;
    int64_t r = tess__tick_width_round_at_or_after(t, goal);
    if (r - t->base > t->W) return 0;             /* out of reach until the next round arrives */
    for (int64_t v = t->base + 1; v <= goal; v++) /* lowest first: the others read it */
        if (width_of(arg, v) < r - v) {
            *v_out = v;
            *width_out = (int)(r - v);
            return 1;
        }
    return 0;
}
