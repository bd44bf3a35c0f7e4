/*
 * test_graph.c — tools/graph: SNAP parsing and its error messages, gzip
 * input, renumbering, the binary cache, SNAP output and the generators.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "graph.h"
#include "tessera/tessera.h"

static char tmp_path[64];

static const char *write_tmp(const void *data, size_t len)
{
    strcpy(tmp_path, "/tmp/test_graph.XXXXXX");
    int fd = mkstemp(tmp_path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, len), (ssize_t)len);
    close(fd);
    return tmp_path;
}

static void *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    void *d = malloc(*len + 1);
    assert_int_equal(fread(d, 1, *len, f), *len);
    fclose(f);
    return d;
}

/* Generate spec into *g, asserted to succeed. */
static void generate(const char *spec, tg_graph *g)
{
    char err[256];
    assert_int_equal(tg_generate(spec, g, err, sizeof err), 0);
}

static void test_parse_small(void **state)
{
    (void)state;
    const char *text = "# comment\r\n"
                       "\n"
                       "  10\t20\r\n"
                       "   \n"
                       "# another\n"
                       "20 5\n"
                       "18446744073709551615 10  \n"
                       "10 10";
    tg_graph g;
    char err[256];
    assert_int_equal(tg_parse_snap("t.txt", text, strlen(text), &g, err, sizeof err), 0);
    assert_int_equal(g.nv, 4);
    assert_int_equal(g.ne, 4);
    uint64_t ids[] = {5, 10, 20, UINT64_MAX};
    assert_memory_equal(g.ids, ids, sizeof ids);
    uint32_t src[] = {1, 2, 3, 1}, dst[] = {2, 0, 1, 1};
    assert_memory_equal(g.src, src, sizeof src);
    assert_memory_equal(g.dst, dst, sizeof dst);
    assert_int_equal(g.nsites, 0);
    assert_null(g.site_first);
    tg_free(&g);
    assert_null(g.ids);
    tg_free(NULL);
}

static void test_renumber_sparse(void **state)
{
    (void)state;
    /* Ids spread too widely for the direct table: the sorting path. */
    const char *text = "1000000000000 3\n7 1000000000000\n3 99999999999999999\n";
    tg_graph g;
    char err[256];
    assert_int_equal(tg_parse_snap("s", text, strlen(text), &g, err, sizeof err), 0);
    uint64_t ids[] = {3, 7, 1000000000000ULL, 99999999999999999ULL};
    assert_int_equal(g.nv, 4);
    assert_memory_equal(g.ids, ids, sizeof ids);
    uint32_t src[] = {2, 1, 0}, dst[] = {0, 2, 3};
    assert_memory_equal(g.src, src, sizeof src);
    assert_memory_equal(g.dst, dst, sizeof dst);
    tg_free(&g);
}

struct bad_case {
    const char *text;
    const char *want; /* substring of the message */
};

/* The message refusing input names the fault (want) on one line. */
static void assert_message(const char *input, const char *err, const char *want)
{
    if (strstr(err, want) == NULL)
        fail_msg("input \"%s\": message \"%s\" lacks \"%s\"", input, err, want);
    assert_null(strchr(err, '\n'));
}

static void test_parse_errors(void **state)
{
    (void)state;
    static const struct bad_case cases[] = {
        {"1 2\n# c\n12 abc\n", "g.txt:3: expected two vertex ids, got \"12 abc\""},
        {"1 2\n3\n", "g.txt:2: expected two vertex ids, got \"3\""},
        {"1 2 3\n", "g.txt:1: expected two vertex ids, got \"1 2 3\""},
        {"\n\n18446744073709551616 1\n", "g.txt:3: vertex id 18446744073709551616 does not fit"},
        {"1 -2\n", "g.txt:1: negative vertex id"},
        {"-1 2\n", "g.txt:1: negative vertex id"},
        {"1 2\r\r\n", "g.txt:1: expected two"},
        {"1 2 # trailing\n", "g.txt:1: expected two"},
        {"1,2\n", "g.txt:1: expected two"},
        {"+1 2\n", "g.txt:1: expected two"},
        {"# only comments\n\n", "g.txt: no edges"},
        {"", "g.txt: no edges"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tg_graph g;
        char err[256] = "";
        int rc = tg_parse_snap("g.txt", cases[i].text, strlen(cases[i].text), &g, err, sizeof err);
        assert_int_equal(rc, TESS_ERR_FORMAT);
        assert_message(cases[i].text, err, cases[i].want);
        assert_null(g.ids);
        assert_int_equal(g.ne, 0);
    }
}

static void test_long_line_truncated(void **state)
{
    (void)state;
    char text[300];
    memset(text, 'x', sizeof text - 1);
    text[sizeof text - 1] = '\0';
    tg_graph g;
    char err[256];
    assert_int_equal(tg_parse_snap("g", text, strlen(text), &g, err, sizeof err), TESS_ERR_FORMAT);
    assert_true(strlen(err) < 120);
    assert_non_null(strstr(err, "...\""));
}

static void test_read_file_errors(void **state)
{
    (void)state;
    tg_graph g;
    char err[256];
    assert_int_equal(tg_read_snap("/nonexistent/missing.txt", &g, err, sizeof err), TESS_ERR_IO);
    assert_string_equal(err, "/nonexistent/missing.txt: No such file or directory");
    assert_int_equal(tg_load_file("/nonexistent/missing.txt", &g, err, sizeof err), TESS_ERR_IO);
    const char *p = write_tmp("1 2\n3 x\n", 8);
    char path[64];
    strcpy(path, p);
    assert_int_equal(tg_load_file(path, &g, err, sizeof err), TESS_ERR_FORMAT);
    char want[128];
    snprintf(want, sizeof want, "%s:2: expected two vertex ids, got \"3 x\"", path);
    assert_string_equal(err, want);
    unlink(path);
}

static void write_gz(const char *path, const char *text, size_t len)
{
    gzFile z = gzopen(path, "wb");
    assert_non_null(z);
    assert_int_equal(gzwrite(z, text, (unsigned)len), (int)len);
    assert_int_equal(gzclose(z), Z_OK);
}

static void test_gzip(void **state)
{
    (void)state;
    /* Big enough to span several reads of the streaming reader. */
    size_t n = 300000, cap = n * 24, len = 0;
    char *text = malloc(cap);
    len += (size_t)sprintf(text, "# gz\r\n");
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(text + len, "%zu\t%zu\r\n", i * 7, (i * 13) % 1000);
    char path[64];
    strcpy(path, write_tmp("", 0));
    write_gz(path, text, len);
    tg_graph g, h;
    char err[256];
    assert_int_equal(tg_read_snap(path, &g, err, sizeof err), 0);
    assert_int_equal(tg_parse_snap("plain", text, len, &h, err, sizeof err), 0);
    assert_int_equal(g.ne, n);
    assert_int_equal(g.nv, h.nv);
    assert_memory_equal(g.ids, h.ids, h.nv * sizeof *h.ids);
    assert_memory_equal(g.src, h.src, h.ne * sizeof *h.src);
    assert_memory_equal(g.dst, h.dst, h.ne * sizeof *h.dst);
    tg_free(&g);
    tg_free(&h);

    /* Cut the compressed file short: an error, never a shorter graph. */
    size_t zlen;
    char *z = slurp(path, &zlen);
    FILE *f = fopen(path, "wb");
    fwrite(z, 1, zlen / 2, f);
    fclose(f);
    assert_int_equal(tg_read_snap(path, &g, err, sizeof err), TESS_ERR_FORMAT);
    assert_non_null(strstr(err, "corrupt gzip stream"));
    assert_non_null(strstr(err, path));
    assert_null(g.ids);
    /* A damaged CRC in the trailer: also an error. */
    z[zlen - 6] ^= 0x55;
    f = fopen(path, "wb");
    fwrite(z, 1, zlen, f);
    fclose(f);
    assert_int_equal(tg_read_snap(path, &g, err, sizeof err), TESS_ERR_FORMAT);
    assert_non_null(strstr(err, "corrupt gzip stream"));
    free(z);
    free(text);
    unlink(path);
}

static void test_gzip_line_number(void **state)
{
    (void)state;
    char path[64];
    strcpy(path, write_tmp("", 0));
    const char *text = "# c\n1 2\n\n4 5 6\n";
    write_gz(path, text, strlen(text));
    tg_graph g;
    char err[256];
    assert_int_equal(tg_read_snap(path, &g, err, sizeof err), TESS_ERR_FORMAT);
    char want[128];
    snprintf(want, sizeof want, "%s:4: expected two vertex ids, got \"4 5 6\"", path);
    assert_string_equal(err, want);
    unlink(path);
}

static void assert_same_graph(const tg_graph *a, const tg_graph *b)
{
    assert_int_equal(a->nv, b->nv);
    assert_int_equal(a->ne, b->ne);
    assert_int_equal(a->nsites, b->nsites);
    assert_memory_equal(a->ids, b->ids, a->nv * sizeof *a->ids);
    assert_memory_equal(a->src, b->src, a->ne * sizeof *a->src);
    assert_memory_equal(a->dst, b->dst, a->ne * sizeof *a->dst);
    if (a->nsites)
        assert_memory_equal(a->site_first, b->site_first, (a->nsites + 1) * sizeof *a->site_first);
}

static void test_cache_round_trip(void **state)
{
    (void)state;
    const char *specs[] = {"web:2000:3", "rmat:8"};
    for (int i = 0; i < 2; i++) {
        tg_graph g, h;
        char err[256], path[64];
        generate(specs[i], &g);
        strcpy(path, write_tmp("", 0));
        assert_int_equal(tg_write_cache(path, &g, err, sizeof err), 0);
        assert_int_equal(tg_read_cache(path, &h, err, sizeof err), 0);
        assert_same_graph(&g, &h);
        tg_free(&h);
        assert_int_equal(tg_load_file(path, &h, err, sizeof err), 0);
        assert_same_graph(&g, &h);
        tg_free(&h);

        /* Every single flipped byte is caught (checksum or structure). */
        size_t len;
        unsigned char *d = slurp(path, &len);
        for (size_t at = 0; at < len; at += 1 + len / 97) {
            d[at] ^= 0x20;
            assert_int_equal(tg_parse_cache("c", d, len, &h, err, sizeof err), TESS_ERR_FORMAT);
            assert_null(h.ids);
            d[at] ^= 0x20;
        }
        d[len / 2] ^= 1;
        assert_int_equal(tg_parse_cache("c.bin", d, len, &h, err, sizeof err), TESS_ERR_FORMAT);
        assert_non_null(strstr(err, "c.bin: graph cache checksum mismatch"));
        d[len / 2] ^= 1;
        assert_int_equal(tg_parse_cache("c", d, len - 1, &h, err, sizeof err), TESS_ERR_FORMAT);
        assert_int_equal(tg_parse_cache("c", d, 20, &h, err, sizeof err), TESS_ERR_FORMAT);
        assert_int_equal(tg_parse_cache("c", d, len, &h, err, sizeof err), 0);
        tg_free(&h);
        free(d);
        unlink(path);
        tg_free(&g);
    }
}

static void test_snap_write_round_trip(void **state)
{
    (void)state;
    tg_graph g, h;
    char err[256], path[64];
    generate("uniform:1000000000000:500:9", &g);
    strcpy(path, write_tmp("", 0));
    assert_int_equal(tg_write_snap(path, &g, err, sizeof err), 0);
    size_t len;
    char *text = slurp(path, &len);
    char head[80];
    snprintf(head, sizeof head, "# tessera graph: %llu vertices, 500 edges\n",
             (unsigned long long)g.nv);
    assert_memory_equal(text, head, strlen(head));
    free(text);
    assert_int_equal(tg_load_file(path, &h, err, sizeof err), 0);
    assert_same_graph(&g, &h);
    tg_free(&h);
    tg_free(&g);
    unlink(path);
    /* A failed write leaves nothing behind. */
    generate("rmat:4", &g);
    assert_int_equal(tg_write_snap("/nonexistent/dir/g.txt", &g, err, sizeof err), TESS_ERR_IO);
    assert_int_equal(tg_write_cache("/nonexistent/dir/g.bin", &g, err, sizeof err), TESS_ERR_IO);
    assert_non_null(strstr(err, "/nonexistent/dir/g.bin"));
    tg_free(&g);
}

static int same_edges(const tg_graph *a, const tg_graph *b)
{
    if (a->ne != b->ne || a->nv != b->nv) return 0;
    for (uint64_t e = 0; e < a->ne; e++)
        if (a->ids[a->src[e]] != b->ids[b->src[e]] || a->ids[a->dst[e]] != b->ids[b->dst[e]])
            return 0;
    return 1;
}

static void test_generators_deterministic(void **state)
{
    (void)state;
    const char *specs[][2] = {{"rmat:10", "rmat:10:16:2"},
                              {"uniform:100:1000", "uniform:100:1000:2"},
                              {"web:1000", "web:1000:2"}};
    for (int i = 0; i < 3; i++) {
        tg_graph a, b, c;
        generate(specs[i][0], &a);
        generate(specs[i][0], &b);
        generate(specs[i][1], &c);
        assert_true(same_edges(&a, &b));
        assert_false(same_edges(&a, &c));
        tg_free(&a);
        tg_free(&b);
        tg_free(&c);
    }
}

/* A generated graph of the size its spec asks for: ne edges, ids (sorted,
 * so also the vertex count) below id_bound. */
static void generate_sized(const char *spec, tg_graph *g, uint64_t ne, uint64_t id_bound)
{
    generate(spec, g);
    assert_int_equal(g->ne, ne);
    assert_true(g->nv <= id_bound);
    assert_true(g->ids[g->nv - 1] < id_bound);
}

static void test_rmat_shape(void **state)
{
    (void)state;
    tg_graph g;
    generate_sized("rmat:10", &g, 16384, 1024);
    /* Skewed degrees: the busiest vertex has far more than the mean 32. */
    uint32_t *deg = calloc(g.nv, sizeof *deg);
    uint32_t max = 0;
    for (uint64_t e = 0; e < g.ne; e++)
        if (++deg[g.src[e]] > max) max = deg[g.src[e]];
    assert_true(max > 200);
    free(deg);
    tg_free(&g);
    generate_sized("rmat:3:2:5", &g, 16, 8);
    tg_free(&g);
}

static void test_uniform_shape(void **state)
{
    (void)state;
    tg_graph g;
    generate_sized("uniform:100:1000", &g, 1000, 100);
    assert_true(g.nv > 90);
    tg_free(&g);
    generate("uniform:1:1", &g);
    assert_int_equal(g.nv, 1);
    assert_int_equal(g.src[0], 0);
    tg_free(&g);
}

static void test_web_sites(void **state)
{
    (void)state;
    tg_graph g;
    generate("web:1000", &g);
    assert_true(g.nsites > 1);
    assert_non_null(g.site_first);
    assert_int_equal(g.site_first[0], 0);
    assert_int_equal(g.site_first[g.nsites], g.nv);
    for (uint64_t s = 0; s < g.nsites; s++) assert_true(g.site_first[s] < g.site_first[s + 1]);
    assert_true(g.ids[g.nv - 1] < 1000);
    /* Most links stay within their site; mean out-degree about 11. */
    uint32_t *site = malloc(g.nv * sizeof *site);
    for (uint64_t s = 0; s < g.nsites; s++)
        for (uint64_t v = g.site_first[s]; v < g.site_first[s + 1]; v++) site[v] = (uint32_t)s;
    uint64_t intra = 0;
    for (uint64_t e = 0; e < g.ne; e++) intra += site[g.src[e]] == site[g.dst[e]];
    assert_true(intra * 100 > g.ne * 70 && intra * 100 < g.ne * 97);
    assert_true(g.ne > 8 * 1000 && g.ne < 15 * 1000);
    free(site);
    tg_free(&g);
    generate("web:1", &g);
    assert_int_equal(g.nv, 1);
    tg_free(&g);
    generate("web:2", &g);
    assert_int_equal(g.site_first[g.nsites], g.nv);
    tg_free(&g);
}

static void test_bad_specs(void **state)
{
    (void)state;
    static const struct bad_case cases[] = {
        {"rmat:abc", "rmat:abc: SCALE must be an integer in [1, 31]"},
        {"rmat:0", "rmat:0: SCALE must be an integer in [1, 31]"},
        {"rmat:32", "SCALE must be"},
        {"rmat:-1", "SCALE must be"},
        {"rmat: 5", "SCALE must be"},
        {"rmat:", "SCALE must be"},
        {"rmat", "rmat: missing SCALE"},
        {"rmat:10:0", "EDGEFACTOR must be an integer in [1, 1024]"},
        {"rmat:10:1025", "EDGEFACTOR must be"},
        {"rmat:10:16:x", "SEED must be"},
        {"rmat:10:16:18446744073709551616", "SEED must be"},
        {"rmat:10:16:1:1", "rmat:10:16:1:1: too many fields"},
        {"uniform:100", "uniform:100: missing M"},
        {"uniform:0:5", "N must be"},
        {"uniform:5:0", "M must be"},
        {"uniform:1:2:3:4", "too many fields"},
        {"web:0", "PAGES must be"},
        {"web:10:1:1", "too many fields"},
        {"web", "missing PAGES"},
        {"foo:1", "foo:1: unknown graph generator \"foo\""},
        {"", "unknown graph generator"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tg_graph g;
        char err[256] = "";
        assert_int_equal(tg_generate(cases[i].text, &g, err, sizeof err), TESS_ERR_INVAL);
        assert_message(cases[i].text, err, cases[i].want);
        assert_null(g.ids);
        assert_int_equal(tg_check_spec(cases[i].text, NULL, 0), TESS_ERR_INVAL);
    }
    assert_int_equal(tg_check_spec("rmat:20:16:7", NULL, 0), 0);
    assert_int_equal(tg_check_spec("uniform:18446744073709551615:1", NULL, 0), 0);
}

TEST_MAIN(cmocka_unit_test(test_parse_small), cmocka_unit_test(test_renumber_sparse),
          cmocka_unit_test(test_parse_errors), cmocka_unit_test(test_long_line_truncated),
          cmocka_unit_test(test_read_file_errors), cmocka_unit_test(test_gzip),
          cmocka_unit_test(test_gzip_line_number), cmocka_unit_test(test_cache_round_trip),
          cmocka_unit_test(test_snap_write_round_trip),
          cmocka_unit_test(test_generators_deterministic), cmocka_unit_test(test_rmat_shape),
          cmocka_unit_test(test_uniform_shape), cmocka_unit_test(test_web_sites),
          cmocka_unit_test(test_bad_specs))
