/*
 * test_app_common.c — apps/common: the atomic output file (commit publishes
 * exactly the file, abort leaves nothing), the metrics JSON text, the
 * option parsers and their one-line messages.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_main.h"

#include "capture.h"

#include "../../apps/common/common.h"

/* ---- helpers ---- */

static char *make_dir(void)
{
    char *dir = strdup("/tmp/tess_app_common_XXXXXX");
    assert_non_null(dir);
    assert_non_null(mkdtemp(dir));
    return dir;
}

/* Names in dir (not . or ..), joined by '|', sorted by readdir order; count returned. */
static int list_dir(const char *dir, char *names, size_t cap)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    names[0] = '\0';
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (n++) strncat(names, "|", cap - strlen(names) - 1);
        strncat(names, e->d_name, cap - strlen(names) - 1);
    }
    closedir(d);
    return n;
}

static char *read_all(const char *path)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    buf[n] = '\0';
    fclose(fp);
    return buf;
}

static void remove_dir(char *dir)
{
    char names[1024], path[2048];
    list_dir(dir, names, sizeof names);
    for (char *name = strtok(names, "|"); name; name = strtok(NULL, "|")) {
        snprintf(path, sizeof path, "%s/%s", dir, name);
        unlink(path);
    }
    rmdir(dir);
    free(dir);
}

/* Tests that work in a fresh directory get it as their state; it is
 * removed, with what they left in it, after the test. */
static int dir_setup(void **state)
{
    *state = make_dir();
    return 0;
}

static int dir_teardown(void **state)
{
    remove_dir(*state);
    return 0;
}

#define DIR_TEST(f) cmocka_unit_test_setup_teardown(f, dir_setup, dir_teardown)

/* app_metrics_print(m) writes exactly want. */
static void assert_prints(const app_metrics *m, const char *want)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    assert_int_equal(app_metrics_print(m, fp), 0);
    fclose(fp);
    assert_string_equal(buf, want);
    free(buf);
}

/* ---- atomic output file ---- */

static void test_outfile_commit_creates_exactly_the_file(void **state)
{
    char *dir = *state;
    char path[512], names[1024], tmp_name[256];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    app_outfile o;
    assert_int_equal(app_outfile_open(&o, path), 0);
    fputs("hello\n", o.fp);
    int n = snprintf(tmp_name, sizeof tmp_name, ".out.txt.tmp.%ld.", (long)getpid());
    assert_int_equal(list_dir(dir, names, sizeof names), 1);
    /* nothing at the final path yet; the temporary's suffix is random */
    assert_int_equal(strncmp(names, tmp_name, (size_t)n), 0);
    assert_int_equal(strlen(names), (size_t)n + 6);
    assert_int_equal(app_outfile_commit(&o), 0);
    assert_int_equal(list_dir(dir, names, sizeof names), 1);
    assert_string_equal(names, "out.txt");
    assert_string_equal(read_all(path), "hello\n");
    app_outfile_abort(&o); /* after commit: no-op, the file stays */
    assert_int_equal(list_dir(dir, names, sizeof names), 1);
}

static void test_outfile_abort_leaves_nothing(void **state)
{
    char *dir = *state;
    char path[512], names[1024];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    app_outfile o;
    assert_int_equal(app_outfile_open(&o, path), 0);
    fputs("partial", o.fp);
    app_outfile_abort(&o);
    assert_int_equal(list_dir(dir, names, sizeof names), 0);
    app_outfile zeroed;
    memset(&zeroed, 0, sizeof zeroed);
    app_outfile_abort(&zeroed);
    app_outfile_abort(NULL);
}

/* A killed run's temporary (its PID is gone) is removed by the next open;
 * one of a live process stays. */
static void test_outfile_cleans_stale_temporaries(void **state)
{
    char *dir = *state;
    char path[512], dead[600], live[600];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    pid_t child = fork();
    if (child == 0) _exit(0);
    assert_true(child > 0);
    assert_int_equal(waitpid(child, NULL, 0), child); /* its PID is free again */
    snprintf(dead, sizeof dead, "%s/.out.txt.tmp.%ld", dir, (long)child);
    snprintf(live, sizeof live, "%s/.out.txt.tmp.%ld", dir, (long)getppid());
    fclose(fopen(dead, "w"));
    fclose(fopen(live, "w"));
    app_outfile o;
    assert_int_equal(app_outfile_open(&o, path), 0);
    assert_int_equal(access(dead, F_OK), -1);
    assert_int_equal(access(live, F_OK), 0);
    app_outfile_abort(&o);
    unlink(live);
}

/* The sweep removes only our own regular files: a symbolic link (or a
 * directory) with a dead PID's temporary name stays, and so does its target. */
static void test_outfile_sweep_spares_links(void **state)
{
    char *dir = *state;
    char path[512], link_name[600], target[600], sub[600];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    pid_t child = fork();
    if (child == 0) _exit(0);
    assert_true(child > 0);
    assert_int_equal(waitpid(child, NULL, 0), child);
    snprintf(target, sizeof target, "%s/precious", dir);
    snprintf(link_name, sizeof link_name, "%s/.out.txt.tmp.%ld", dir, (long)child);
    snprintf(sub, sizeof sub, "%s/.out.txt.tmp.%ld.abcdef", dir, (long)child);
    fclose(fopen(target, "w"));
    assert_int_equal(symlink(target, link_name), 0);
    assert_int_equal(mkdir(sub, 0700), 0);
    app_outfile o;
    assert_int_equal(app_outfile_open(&o, path), 0);
    app_outfile_abort(&o);
    assert_int_equal(access(target, F_OK), 0);
    struct stat st;
    assert_int_equal(lstat(link_name, &st), 0);
    assert_int_equal(lstat(sub, &st), 0);
    rmdir(sub);
}

/* A symbolic link planted at every name a temporary of ours could take
 * today (the old "DIR/.NAME.tmp.PID") is never written through: the
 * target keeps its bytes and the output is a regular file. */
static void test_outfile_ignores_planted_links(void **state)
{
    char *dir = *state;
    char path[512], planted[600], target[600];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    snprintf(target, sizeof target, "%s/victim", dir);
    snprintf(planted, sizeof planted, "%s/.out.txt.tmp.%ld", dir, (long)getpid());
    FILE *fp = fopen(target, "w");
    fputs("keep me\n", fp);
    fclose(fp);
    assert_int_equal(symlink(target, planted), 0);
    app_outfile o;
    assert_int_equal(app_outfile_open(&o, path), 0);
    fputs("output\n", o.fp);
    assert_int_equal(app_outfile_commit(&o), 0);
    assert_string_equal(read_all(target), "keep me\n");
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_string_equal(read_all(path), "output\n");
    unlink(planted);
}

static void test_outfile_replaces_existing_file(void **state)
{
    char *dir = *state;
    char path[512], names[1024];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    FILE *fp = fopen(path, "w");
    fputs("old contents\n", fp);
    fclose(fp);
    app_outfile o;
    assert_int_equal(app_outfile_open(&o, path), 0);
    fputs("new\n", o.fp);
    assert_string_equal(read_all(path), "old contents\n");
    assert_int_equal(app_outfile_commit(&o), 0);
    assert_string_equal(read_all(path), "new\n");
    assert_int_equal(list_dir(dir, names, sizeof names), 1);
}

static const char *bad_open_path;
static int open_bad_path(void)
{
    app_outfile o;
    return app_outfile_open(&o, bad_open_path);
}

static void test_outfile_open_failure_message(void **state)
{
    (void)state;
    bad_open_path = "/nonexistent-dir-tessera/x.txt";
    const char *err = capture_stderr(open_bad_path);
    assert_int_equal(captured_rc, -1);
    assert_string_equal(err, "tessera: cannot write /nonexistent-dir-tessera/x.txt: "
                             "No such file or directory\n");
    bad_open_path = "";
    capture_stderr(open_bad_path);
    assert_int_equal(captured_rc, -1);
}

/* ---- metrics JSON ---- */

static app_metrics *sample_metrics(void)
{
    app_metrics *m = app_metrics_new();
    assert_non_null(m);
    app_metrics_str(m, "app", "kmeans");
    app_metrics_int(m, "ranks", 2);
    app_metrics_num(m, "wall_seconds", 0.1);
    app_metrics_str(m, "note", "a \"quoted\"\\ line\n\ttab\x01");
    app_metrics_bool(m, "emulated", 0);
    app_metrics_bool(m, "ok", 5);
    double list[3] = {1.5, 2.0, 1e-300};
    app_metrics_list(m, "iteration_seconds", list, 3);
    app_metrics_list(m, "empty", NULL, 0);
    app_metrics_int(m, "ranks", 3); /* replaced in place, order kept */
    app_metrics_num(m, "inf", 1.0 / 0.0);
    app_metrics_int(m, "big", INT64_MIN);
    return m;
}

static const char sample_json[] = "{\n"
                                  "  \"app\": \"kmeans\",\n"
                                  "  \"ranks\": 3,\n"
                                  "  \"wall_seconds\": 0.10000000000000001,\n"
                                  "  \"note\": \"a \\\"quoted\\\"\\\\ line\\n\\ttab\\u0001\",\n"
                                  "  \"emulated\": false,\n"
                                  "  \"ok\": true,\n"
                                  "  \"iteration_seconds\": [1.5, 2, 1e-300],\n"
                                  "  \"empty\": [],\n"
                                  "  \"inf\": null,\n"
                                  "  \"big\": -9223372036854775808\n"
                                  "}\n";

static void test_metrics_text(void **state)
{
    (void)state;
    app_metrics *m = sample_metrics();
    assert_prints(m, sample_json);
    app_metrics_free(m);
    app_metrics_free(NULL);
}

static void test_metrics_write_file(void **state)
{
    char *dir = *state;
    char path[512], names[1024];
    snprintf(path, sizeof path, "%s/m.json", dir);
    app_metrics *m = sample_metrics();
    assert_int_equal(app_metrics_write(m, path), 0);
    assert_string_equal(read_all(path), sample_json);
    assert_int_equal(list_dir(dir, names, sizeof names), 1);
    app_metrics_free(m);
}

static void test_metrics_empty_object(void **state)
{
    (void)state;
    app_metrics *m = app_metrics_new();
    assert_prints(m, "{\n}\n");
    app_metrics_free(m);
}

/* Nested objects print on one line; JSON Lines records are compact and
 * appended, one line each. */
static void test_metrics_nested_and_lines(void **state)
{
    (void)state;
    app_metrics *m = app_metrics_new();
    app_metrics *per[2] = {app_metrics_new(), app_metrics_new()};
    app_metrics_int(per[0], "messages", 3);
    app_metrics_num(per[1], "wall_seconds", 0.5);
    app_metrics_str(m, "app", "x");
    app_metrics_objects(m, "per_worker", per, 2);
    app_metrics *params = app_metrics_new();
    app_metrics_bool(params, "mpi", 0);
    app_metrics_object(m, "params", params);
    assert_prints(m, "{\n  \"app\": \"x\",\n"
                     "  \"per_worker\": [{\"messages\": 3}, {\"wall_seconds\": 0.5}],\n"
                     "  \"params\": {\"mpi\": false}\n}\n");
    char *dir = make_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/r.jsonl", dir);
    assert_int_equal(app_metrics_append_line(m, path, "test"), 0);
    assert_int_equal(app_metrics_append_line(m, path, "test"), 0);
    const char *line = "{\"app\":\"x\",\"per_worker\":[{\"messages\":3},"
                       "{\"wall_seconds\":0.5}],\"params\":{\"mpi\":false}}\n";
    char both[512];
    snprintf(both, sizeof both, "%s%s", line, line);
    assert_string_equal(read_all(path), both);
    app_metrics_free(m);
    remove_dir(dir);
}

/* ---- option parsers ---- */

static const char *int_text;
static long int_out;
static int parse_k(void) { return app_parse_int("kmeans", "k", int_text, 1, 1000000, &int_out); }

static void test_parse_int_accepts(void **state)
{
    (void)state;
    assert_int_equal(app_parse_int("x", "k", "42", 1, 100, &int_out), 0);
    assert_int_equal(int_out, 42);
    assert_int_equal(app_parse_int("x", "k", "-5", -10, 10, &int_out), 0);
    assert_int_equal(int_out, -5);
    assert_int_equal(app_parse_int("x", "k", "1000000", 1, 1000000, &int_out), 0);
}

static void expect_int_error(const char *text, const char *message)
{
    int_text = text;
    int_out = -777;
    const char *err = capture_stderr(parse_k);
    assert_int_equal(captured_rc, -1);
    assert_int_equal(int_out, -777); /* untouched on failure */
    assert_string_equal(err, message);
}

static void test_parse_int_rejects(void **state)
{
    (void)state;
    expect_int_error("abc", "tessera kmeans: option --k: expected an integer in [1, 1000000], "
                            "got 'abc'\n");
    expect_int_error("0", "tessera kmeans: option --k: expected an integer in [1, 1000000], "
                          "got '0'\n");
    expect_int_error("1000001", "tessera kmeans: option --k: expected an integer in "
                                "[1, 1000000], got '1000001'\n");
    expect_int_error("12x", "tessera kmeans: option --k: expected an integer in [1, 1000000], "
                            "got '12x'\n");
    expect_int_error("", "tessera kmeans: option --k: expected an integer in [1, 1000000], "
                         "got ''\n");
    expect_int_error(" 5", "tessera kmeans: option --k: expected an integer in [1, 1000000], "
                           "got ' 5'\n");
    expect_int_error("99999999999999999999999",
                     "tessera kmeans: option --k: expected an "
                     "integer in [1, 1000000], got '99999999999999999999999'\n");
    expect_int_error(NULL, "tessera kmeans: option --k: missing value\n");
}

static const char *dbl_text;
static double dbl_out;
static int parse_damping(void)
{
    return app_parse_double("pagerank", "--damping", dbl_text, 0.0, 1.0, &dbl_out);
}

static void test_parse_double(void **state)
{
    (void)state;
    assert_int_equal(app_parse_double("x", "d", "0.85", 0, 1, &dbl_out), 0);
    assert_true(dbl_out == 0.85);
    assert_int_equal(app_parse_double("x", "d", "1e-3", 0, 1, &dbl_out), 0);
    assert_true(dbl_out == 1e-3);
    const char *bad[] = {"nan", "inf", "1.5", "-0.1", "0.5x", "", " 0.5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dbl_text = bad[i];
        char want[128];
        snprintf(want, sizeof want,
                 "tessera pagerank: option --damping: expected a number in [0, 1], got '%s'\n",
                 bad[i]);
        assert_string_equal(capture_stderr(parse_damping), want);
        assert_int_equal(captured_rc, -1);
    }
}

static int print_app_error(void)
{
    app_error("kmeans", "%s:%d: %s", "pts.txt", 3, "bad");
    return 0;
}

static void test_app_error_one_line(void **state)
{
    (void)state;
    assert_string_equal(capture_stderr(print_app_error), "tessera kmeans: pts.txt:3: bad\n");
}

static void test_progress_modes(void **state)
{
    (void)state;
    assert_int_equal(app_progress_enabled(APP_PROGRESS_ON), 1);
    assert_int_equal(app_progress_enabled(APP_PROGRESS_OFF), 0);
    assert_int_equal(app_progress_enabled(APP_PROGRESS_AUTO), isatty(STDERR_FILENO) ? 1 : 0);
}

TEST_MAIN(DIR_TEST(test_outfile_commit_creates_exactly_the_file),
          DIR_TEST(test_outfile_abort_leaves_nothing),
          DIR_TEST(test_outfile_replaces_existing_file),
          DIR_TEST(test_outfile_cleans_stale_temporaries),
          DIR_TEST(test_outfile_sweep_spares_links), DIR_TEST(test_outfile_ignores_planted_links),
          cmocka_unit_test(test_outfile_open_failure_message), cmocka_unit_test(test_metrics_text),
          DIR_TEST(test_metrics_write_file), cmocka_unit_test(test_metrics_empty_object),
          cmocka_unit_test(test_metrics_nested_and_lines), cmocka_unit_test(test_parse_int_accepts),
          cmocka_unit_test(test_parse_int_rejects), cmocka_unit_test(test_parse_double),
          cmocka_unit_test(test_app_error_one_line), cmocka_unit_test(test_progress_modes))
