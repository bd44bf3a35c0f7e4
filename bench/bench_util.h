/*
 * bench_util.h — what the benchmark drivers share: "--name VALUE" /
 * "--name=VALUE" options, their temporary directory, and finding mpirun.
 */
#ifndef TESS_BENCH_UTIL_H
#define TESS_BENCH_UTIL_H

#include <stddef.h>

/* Is arg the option `name` (as "--name" or "--name=VALUE")? */
int bench_is_option(const char *arg, const char *name);
/* The value of the option at argv[*i]: after '=', else the next argument
 * (advancing *i); NULL when missing. */
const char *bench_option_value(int argc, char **argv, int *i);
/* The full path of executable `name` found on PATH, into out; 0 or -1 (out
 * empty). */
int bench_find_on_path(const char *name, char *out, size_t len);
/* mkdtemp "PARENT/PREFIX-XXXXXX" into out (PARENT: parent, else $TMPDIR,
 * else /tmp).  0, or -1 after "tessera BENCH: ..." on stderr (out empty). */
int bench_make_tmpdir(char *out, size_t cap, const char *parent, const char *prefix,
                      const char *bench);

#endif
