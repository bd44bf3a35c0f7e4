/*
 * nbody_step.h — the step kernel's work and the writing of particles into
 * a cell table, shared by nbody.c (which loads the first state with the
 * same writer).  Private to apps/nbody.
 */
#ifndef TESS_APPS_NBODY_STEP_H
#define TESS_APPS_NBODY_STEP_H

#include "nbody.h"
#include "tessera/tessera.h"

/* Step the particles of partition p of `from` and put them into `to`; a
 * particle the step would carry out of the model's range fails it with a
 * message on ctx (tess_set_error). */
int nbody_step_instance(tess_ctx *ctx, tess_table *from, tess_table *to, const nbody_params *prm,
                        int cells, int p, int partitions);

/* Put particles p[0..n) into `to`, one entry per cell, keyed with writer. */
int nbody_put_cells(tess_table *to, const nbody_params *prm, int cells, uint32_t writer,
                    const nbody_particle *p, size_t n);

#endif
