/*
 * test_app_crawl_robots.c — robots.txt rules as the crawler applies them:
 * longest match wins, allow wins a tie, '*' any run, a final '$' the end.
 * The matcher is checked against a plainly recursive one on every short
 * pattern and path over a small alphabet, and a pattern with many stars
 * against a long path (exponential for a recursive matcher) must finish.
 * Rules and paths are compared normalised (RFC 9309 2.2.2), so an encoded
 * path cannot dodge a rule.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "test_main.h"
#include "crawl/crawl_app.h"

/* One rule "Disallow: pat" for every agent, as a parsed blob. */
static unsigned char *one_rule(const char *pat, size_t *len)
{
    char body[256];
    snprintf(body, sizeof body, "User-agent: *\nDisallow: %s\n", pat);
    return crawl_robots_parse(body, strlen(body), "tessera", len);
}

/* The definition, tried split by split (exponential, fine for short inputs). */
static int reference_match(const char *pat, const char *path)
{
    if (*pat == '\0') return 1;
    if (pat[0] == '$' && pat[1] == '\0') return *path == '\0';
    if (*pat == '*') {
        for (const char *s = path;; s++) {
            if (reference_match(pat + 1, s)) return 1;
            if (*s == '\0') return 0;
        }
    }
    return *path != '\0' && *pat == *path && reference_match(pat + 1, path + 1);
}

/* The i-th string of length <= 4 over alphabet (base-k digits, 0 = stop). */
static void nth_string(unsigned i, const char *alphabet, char *out)
{
    size_t k = strlen(alphabet), n = 0;
    while (i > 0 && n < 4) {
        out[n++] = alphabet[(i - 1) % k];
        i = (i - 1) / k;
    }
    out[n] = '\0';
}

static void test_matches_the_definition(void **state)
{
    (void)state;
    char pat[8] = "/", path[8] = "/";
    for (unsigned i = 0; i < 1 + 4 + 16 + 64 + 256; i++) {
        nth_string(i, "a*$b", pat + 1);
        size_t len = 0;
        unsigned char *blob = one_rule(pat, &len);
        assert_non_null(blob);
        for (unsigned j = 0; j < 1 + 3 + 9 + 27 + 81; j++) {
            nth_string(j, "ab$", path + 1);
            int want = !reference_match(pat, path);
            if (crawl_robots_allows(blob, len, path) != want)
                fail_msg("pattern \"%s\" path \"%s\": want allowed=%d", pat, path, want);
        }
        free(blob);
    }
}

/* The robots.txt `body`, read as tessera, allows every path of `yes` and
 * none of `no` (both NULL-terminated). */
static void assert_paths(const char *body, const char *const *yes, const char *const *no)
{
    size_t len = 0;
    unsigned char *blob = crawl_robots_parse(body, strlen(body), "tessera", &len);
    assert_non_null(blob);
    for (; *yes; yes++)
        if (!crawl_robots_allows(blob, len, *yes)) fail_msg("%s was refused", *yes);
    for (; *no; no++)
        if (crawl_robots_allows(blob, len, *no)) fail_msg("%s was allowed", *no);
    free(blob);
}

static void test_longest_rule_wins(void **state)
{
    (void)state;
    const char *body = "User-agent: *\nDisallow: /private\nAllow: /private/open*\n"
                       "Disallow: /*.pdf$\nUser-agent: other\nDisallow: /\n";
    const char *yes[] = {"/private/open/a.html", "/docs/a.pdf?x=1", "/robots.txt", "/public", NULL};
    const char *no[] = {"/private/a.html", "/docs/a.pdf", NULL};
    assert_paths(body, yes, no);
}

static void test_many_stars_finish(void **state)
{
    (void)state;
    char pat[64] = "/", path[4096];
    for (int i = 0; i < 20; i++) strcat(pat, "a*");
    strcat(pat, "b");
    path[0] = '/';
    memset(path + 1, 'a', sizeof path - 2);
    path[sizeof path - 1] = '\0';
    size_t len = 0;
    unsigned char *blob = one_rule(pat, &len);
    assert_non_null(blob);
    assert_true(crawl_robots_allows(blob, len, path)); /* no 'b': the rule misses */
    path[sizeof path - 2] = 'b';
    assert_false(crawl_robots_allows(blob, len, path));
    free(blob);
}

static void test_encoded_paths_cannot_dodge_rules(void **state)
{
    (void)state;
    const char *body = "User-agent: *\nDisallow: /private/\nDisallow: /*.pdf$\n"
                       "Disallow: /%7euser/\nDisallow: /a%2fb\nDisallow: /caf\xc3\xa9\n";
    const char *yes[] = {"/doc.PD%66", /* letters keep their case */
                         "/a/b",       /* %2F is not '/' */
                         "/privat", NULL};
    const char *no[] = {"/%70rivate/x.html",
                        "/%70%72%69%76%61%74%65/",
                        "/doc.pd%66",
                        "/~user/x",
                        "/%7Euser/x",
                        "/a%2Fb",
                        "/caf%C3%A9",
                        "/caf%c3%a9",
                        NULL};
    assert_paths(body, yes, no);
}

static void test_normal_form(void **state)
{
    (void)state;
    const char *cases[][2] = {
        {"/%70rivate/", "/private/"}, {"/%2f%2F", "/%2F%2F"},   {"/a b", "/a%20b"},
        {"/100%", "/100%25"},         {"/%zz%4", "/%25zz%254"}, {"/*.pdf$", "/*.pdf$"},
        {"/\x1b[2J", "/%1B[2J"},      {"/%41%7e%2D", "/A~-"},   {"/\"q\"", "/%22q%22"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *n = crawl_robots_normalize(cases[i][0]);
        assert_non_null(n);
        assert_string_equal(n, cases[i][1]);
        char *again = crawl_robots_normalize(n); /* a normal form is its own */
        assert_string_equal(again, n);
        free(again);
        free(n);
    }
}

TEST_MAIN(cmocka_unit_test(test_matches_the_definition), cmocka_unit_test(test_longest_rule_wins),
          cmocka_unit_test(test_many_stars_finish),
          cmocka_unit_test(test_encoded_paths_cannot_dodge_rules),
          cmocka_unit_test(test_normal_form))
