/*
 * test_app_crawl_scope.c — what the crawler may contact: links only to the
 * seeds' hosts and --allow-hosts unless --scope any, and no connection to a
 * loopback, private, link-local or other non-public address unless
 * --allow-addresses names it (IPv4, IPv6, IPv4-mapped and NAT64 forms).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "test_main.h"
#include "crawl/crawl_app.h"

/* The scope of these options and seeds (NULL-terminated). */
static void make_scope(crawl_scope *s, const char *scope, const char *hosts, const char *nets,
                       const char *const *seeds)
{
    crawl_opts o;
    memset(&o, 0, sizeof o);
    o.scope = scope, o.allow_hosts = hosts, o.allow_addresses = nets;
    assert_int_equal(crawl_scope_init(s, &o), 0);
    for (; seeds && *seeds; seeds++) assert_int_equal(crawl_scope_add_seed(*seeds, s), 0);
    crawl_scope_finish(s);
}

/* 1 if the scope refuses a connection to the address text. */
static int refuses(const crawl_scope *s, const char *text)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, text, &v4->sin_addr) == 1) v4->sin_family = AF_INET;
    else {
        assert_int_equal(inet_pton(AF_INET6, text, &v6->sin6_addr), 1);
        v6->sin6_family = AF_INET6;
    }
    char why[160] = "";
    int r = crawl_scope_refuses(s, (struct sockaddr *)&ss, why, sizeof why);
    if (r) assert_non_null(strstr(why, "address"));
    return r;
}

/* The scope refuses every address of `no` and none of `yes` (each list
 * NULL-terminated). */
static void assert_addresses(const crawl_scope *s, const char *const *no, const char *const *yes)
{
    for (; *no; no++)
        if (!refuses(s, *no)) fail_msg("%s was not refused", *no);
    for (; *yes; yes++)
        if (refuses(s, *yes)) fail_msg("%s was refused", *yes);
}

/* The scope allows every URL of `yes` and none of `no` (NULL-terminated). */
static void assert_urls(const crawl_scope *s, const char *const *yes, const char *const *no)
{
    for (; *yes; yes++)
        if (!crawl_scope_allows(s, *yes)) fail_msg("%s was not allowed", *yes);
    for (; *no; no++)
        if (crawl_scope_allows(s, *no)) fail_msg("%s was allowed", *no);
}

static void test_non_public_addresses_refused(void **state)
{
    (void)state;
    crawl_scope s;
    make_scope(&s, NULL, NULL, NULL, NULL);
    const char *bad[] = {"127.0.0.1",
                         "127.255.0.9",
                         "10.0.0.1",
                         "172.16.0.1",
                         "172.31.255.255",
                         "192.168.1.1",
                         "169.254.169.254",
                         "0.0.0.0",
                         "100.100.100.200",
                         "::1",
                         "::",
                         "fd00:ec2::254",
                         "fc00::1",
                         "fe80::1",
                         "::ffff:10.0.0.1",
                         "::ffff:127.0.0.1",
                         "64:ff9b::a9fe:a9fe",
                         "224.0.0.1",
                         "255.255.255.255",
                         NULL};
    const char *good[] = {"93.184.216.34",  "8.8.8.8",          "172.32.0.1",
                          "192.169.0.1",    "11.0.0.1",         "2606:4700::1111",
                          "::ffff:1.1.1.1", "64:ff9b::808:808", NULL};
    assert_addresses(&s, bad, good);
    crawl_scope_free(&s);
}

static void test_allow_addresses(void **state)
{
    (void)state;
    crawl_scope s;
    make_scope(&s, NULL, NULL, "127.0.0.1,10.1.0.0/16,fe80::/10", NULL);
    const char *no[] = {"127.0.0.2", "10.2.0.1", "::1", "169.254.169.254", NULL};
    const char *yes[] = {"127.0.0.1", "::ffff:127.0.0.1", "10.1.200.3", "fe80::1", NULL};
    assert_addresses(&s, no, yes);
    crawl_scope_free(&s);
}

/* crawl_scope_init must refuse these options. */
static void assert_options_refused(const char *scope, const char *hosts, const char *nets)
{
    crawl_opts o;
    crawl_scope s;
    memset(&o, 0, sizeof o);
    o.scope = scope, o.allow_hosts = hosts, o.allow_addresses = nets;
    if (crawl_scope_init(&s, &o) == 0)
        fail_msg("accepted --scope %s --allow-hosts '%s' --allow-addresses '%s'", scope, hosts,
                 nets);
    crawl_scope_free(&s);
}

static void test_bad_options_refused(void **state)
{
    (void)state;
    const char *nets[] = {"10.0.0.0/33", "10.0.0/8", "", "10.0.0.0/", "::1/129", "x", "1.2.3.4,"};
    for (size_t i = 0; i < sizeof nets / sizeof *nets; i++)
        assert_options_refused(NULL, NULL, nets[i]);
    const char *hosts[] = {"http://a.org/", "a.org:80", "*", "a b", "*a.org", ""};
    for (size_t i = 0; i < sizeof hosts / sizeof *hosts; i++)
        assert_options_refused(NULL, hosts[i], NULL);
    assert_options_refused("everything", NULL, NULL);
}

static void test_links_stay_on_the_seeds_hosts(void **state)
{
    (void)state;
    const char *seeds[] = {"http://a.example/", "https://[::1]:8443/x", NULL};
    crawl_scope s;
    make_scope(&s, NULL, "B.example,*.c.example", NULL, seeds);
    const char *in[] = {"http://a.example/p",
                        "https://a.example:8080/p", /* any scheme, port */
                        "http://[::1]/",
                        "http://b.example/",
                        "http://x.c.example/",
                        "http://y.x.c.example:81/",
                        NULL};
    const char *out[] = {"http://c.example/", "http://www.a.example/",
                         "http://169.254.169.254/latest/meta-data/", "http://a.example.evil/",
                         NULL};
    assert_urls(&s, in, out);
    crawl_scope_free(&s);
    make_scope(&s, "any", NULL, NULL, seeds);
    assert_true(crawl_scope_allows(&s, "http://169.254.169.254/"));
    crawl_scope_free(&s);
}

/* A host is a name (or a bracketed IPv6 literal): a '%' in it is refused,
 * as libcurl decodes "%33" there and "b.e%%33" would turn into another name
 * each time it is normalised (found by fuzz_crawl). */
static void test_url_host_is_a_name(void **state)
{
    (void)state;
    char url[CRAWL_URL_MAX], again[CRAWL_URL_MAX];
    const char *base = "http://a.example/dir/";
    assert_int_equal(crawl_url_normalize(base, "http://B.e%%3333/", url, sizeof url, NULL, 0), -1);
    assert_int_equal(crawl_url_normalize(base, "http://a b.example/", url, sizeof url, NULL, 0),
                     -1);
    const char *good[] = {"http://Example.COM/a", "http://[::1]:8080/x", "//x_y.example/p",
                          "q?a=1"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        assert_int_equal(crawl_url_normalize(base, good[i], url, sizeof url, NULL, 0), 0);
        assert_int_equal(crawl_url_normalize(NULL, url, again, sizeof again, NULL, 0), 0);
        assert_string_equal(url, again);
    }
    assert_int_equal(crawl_url_normalize(base, "http://%3333", url, sizeof url, NULL, 0), 0);
    assert_string_equal(url, "http://0.0.1.77/");
}

TEST_MAIN(cmocka_unit_test(test_non_public_addresses_refused),
          cmocka_unit_test(test_allow_addresses), cmocka_unit_test(test_bad_options_refused),
          cmocka_unit_test(test_links_stay_on_the_seeds_hosts),
          cmocka_unit_test(test_url_host_is_a_name))
