/*
 * test_app_ckpt_cli.c — apps/common/ckpt_cli: which iterations take a
 * checkpoint, the option cross-checks and their one-line messages, the
 * creation of --checkpoint-dir, and the hash behind the apps' job strings.
 * (The runtime side — enable, restore, wait — is exercised end to end by
 * tests/integration/ckpt_cli.sh.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_main.h"

#include "capture.h"

#include "../../apps/common/ckpt_cli.h"

static void test_due_every_n_never_after_the_last(void **state)
{
    (void)state;
    app_ckpt_cli c = {.dir = "d", .every = 2};
    int want[] = {0, 0, 1, 0, 1, 0, 1, 0, 1, 0}; /* done = 0 .. 9 of 9 */
    for (long done = 1; done <= 9; done++)
        assert_int_equal(app_ckpt_cli_due(&c, done, 9), want[done]);
    assert_int_equal(app_ckpt_cli_due(&c, 8, 8), 0); /* the last iteration */
    c.every = 1;
    assert_int_equal(app_ckpt_cli_due(&c, 1, 3), 1);
    assert_int_equal(app_ckpt_cli_due(&c, 3, 3), 0);
    c.dir = NULL; /* no checkpoints without a directory */
    assert_int_equal(app_ckpt_cli_due(&c, 1, 3), 0);
}

static app_ckpt_cli check_in;
static int check(void) { return app_ckpt_cli_check("pagerank", &check_in); }

static void test_check(void **state)
{
    (void)state;
    check_in = (app_ckpt_cli){.restore = 1};
    assert_string_equal(capture_stderr(check),
                        "tessera pagerank: option --restore needs --checkpoint-dir DIR\n");
    assert_int_equal(captured_rc, -1);
    check_in = (app_ckpt_cli){.every = 3};
    assert_string_equal(capture_stderr(check),
                        "tessera pagerank: option --checkpoint-every needs --checkpoint-dir DIR\n");
    assert_int_equal(captured_rc, -1);
    check_in = (app_ckpt_cli){.dir = ""};
    assert_string_equal(capture_stderr(check),
                        "tessera pagerank: option --checkpoint-dir: empty directory name\n");
    check_in = (app_ckpt_cli){.dir = "d"};
    assert_string_equal(capture_stderr(check), "");
    assert_int_equal(captured_rc, 0);
    assert_int_equal(check_in.every, APP_CKPT_DEFAULT_EVERY);
    check_in = (app_ckpt_cli){0};
    assert_string_equal(capture_stderr(check), "");
    assert_int_equal(check_in.every, APP_CKPT_DEFAULT_EVERY); /* unused without a dir */
}

static app_ckpt_cli every_in;
static const char *every_text;
static int parse_every(void) { return app_ckpt_cli_parse_every("kmeans", &every_in, every_text); }

static void test_parse_every(void **state)
{
    (void)state;
    every_text = "5";
    assert_string_equal(capture_stderr(parse_every), "");
    assert_int_equal(every_in.every, 5);
    every_text = "0";
    assert_string_equal(capture_stderr(parse_every),
                        "tessera kmeans: option --checkpoint-every: expected an integer in "
                        "[1, 1000000000], got '0'\n");
    assert_int_equal(captured_rc, -1);
}

static void test_hash_depends_on_every_byte_and_the_length(void **state)
{
    (void)state;
    unsigned char buf[37];
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)i;
    uint64_t h = app_hash_bytes(0, buf, sizeof buf);
    assert_true(h == app_hash_bytes(0, buf, sizeof buf)); /* a function of its input */
    for (size_t i = 0; i < sizeof buf; i++) {
        buf[i] ^= 1;
        assert_true(app_hash_bytes(0, buf, sizeof buf) != h);
        buf[i] ^= 1;
    }
    unsigned char zeros[16] = {0};
    assert_true(app_hash_bytes(0, zeros, 8) != app_hash_bytes(0, zeros, 16));
    assert_true(app_hash_bytes(0, zeros, 0) != app_hash_bytes(1, zeros, 0)); /* chained */
}

TEST_MAIN(cmocka_unit_test(test_due_every_n_never_after_the_last), cmocka_unit_test(test_check),
          cmocka_unit_test(test_parse_every),
          cmocka_unit_test(test_hash_depends_on_every_byte_and_the_length))
