/*
 * fuzz_crawl.c — libFuzzer target for the crawler's parsers of what a web
 * server sends (apps/crawl): robots.txt (crawl_robots.c), the links of an
 * HTML page (crawl_html.c, libxml2) and their resolution to normal URLs
 * (crawl_url.c, libcurl's URL API).  Any bytes give rules, links or nothing,
 * never a crash; a normal URL, and a path in the normal form robots.txt
 * rules are matched in, is its own normal form.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "crawl_app.h"

static void on_link(const char *href, void *arg)
{
    (void)arg;
    char url[CRAWL_URL_MAX], again[CRAWL_URL_MAX], origin[CRAWL_URL_MAX];
    if (crawl_url_normalize("http://a.example:8080/dir/page.html", href, url, sizeof url, origin,
                            sizeof origin) != 0)
        return;
    /* Normalising a normal URL must give it back. */
    if (crawl_url_normalize(NULL, url, again, sizeof again, NULL, 0) != 0) __builtin_trap();
    if (strcmp(url, again) != 0) __builtin_trap();
    if (crawl_url_path(url)[0] != '/') __builtin_trap();
    (void)crawl_url_key(url);
    char host[CRAWL_URL_MAX];
    crawl_url_host(url, host, sizeof host);
    if (host[0] == '\0') __builtin_trap();
}

/* The robots.txt normal form is idempotent. */
static void check_normal_form(const char *text)
{
    char *once = crawl_robots_normalize(text);
    char *twice = once ? crawl_robots_normalize(once) : NULL;
    if (once && twice && strcmp(once, twice) != 0) __builtin_trap();
    free(once);
    free(twice);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (text == NULL) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    size_t len = 0;
    unsigned char *blob = crawl_robots_parse(text, size, "tessera", &len);
    if (blob) {
        static const char *const paths[] = {"/", "/private/a.html", "/robots.txt", "/a?b=c"};
        for (size_t i = 0; i < sizeof paths / sizeof *paths; i++)
            (void)crawl_robots_allows(blob, len, paths[i]);
        (void)crawl_robots_allows(blob, len, text); /* the input itself as a path */
        (void)crawl_robots_reason(blob, len);
        /* A truncated blob is read without overrunning it. */
        for (size_t cut = 0; cut < len && cut < 64; cut++)
            (void)crawl_robots_allows(blob, cut, "/x");
    }
    free(blob);
    check_normal_form(text);
    crawl_html_links(text, size, on_link, NULL);
    free(text);
    return 0;
}
