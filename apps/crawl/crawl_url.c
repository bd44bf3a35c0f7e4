/*
 * crawl_url.c — URLs of the crawler: resolution of links against the page
 * they appear on (libcurl's URL API, which follows RFC 3986), one normal
 * form per page, and the keys and partitions derived from it.  A site is an
 * origin, as robots.txt defines it: scheme, host and port.
 */
#include <ctype.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "crawl_app.h"

static void lower(char *s)
{
    for (; *s; s++) *s = (char)tolower((unsigned char)*s);
}

static int scheme_port(const char *scheme)
{
    if (strcmp(scheme, "http") == 0) return 80;
    if (strcmp(scheme, "https") == 0) return 443;
    return -1;
}

/* Parse href (relative to base when base is given) into h. */
static int url_set(CURLU *h, const char *base, const char *href)
{
    if (base && curl_url_set(h, CURLUPART_URL, base, 0) != CURLUE_OK) return -1;
    /* Without a base only absolute URLs with an http(s) scheme pass. */
    return curl_url_set(h, CURLUPART_URL, href, CURLU_NON_SUPPORT_SCHEME) == CURLUE_OK ? 0 : -1;
}

typedef struct url_parts {
    char *scheme, *host, *port, *path, *query;
} url_parts;

static void parts_free(url_parts *p)
{
    curl_free(p->scheme), curl_free(p->host), curl_free(p->port);
    curl_free(p->path), curl_free(p->query);
}

static int parts_get(CURLU *h, url_parts *p)
{
    memset(p, 0, sizeof *p);
    if (curl_url_get(h, CURLUPART_SCHEME, &p->scheme, 0) != CURLUE_OK) return -1;
    if (curl_url_get(h, CURLUPART_HOST, &p->host, 0) != CURLUE_OK) return -1;
    if (curl_url_get(h, CURLUPART_PORT, &p->port, CURLU_DEFAULT_PORT) != CURLUE_OK) return -1;
    if (curl_url_get(h, CURLUPART_PATH, &p->path, 0) != CURLUE_OK) return -1;
    CURLUcode q = curl_url_get(h, CURLUPART_QUERY, &p->query, 0);
    return q == CURLUE_OK || q == CURLUE_NO_QUERY ? 0 : -1;
}

/* A host name is letters, digits, '.', '-' and '_' (or bytes of a UTF-8
 * name); anything else, a '%' above all, is not a host: libcurl decodes
 * "%33" in a host, so "b.e%%33" would turn into another name each time it
 * is normalised.  An IPv6 literal in brackets is libcurl's to check. */
static int host_name_ok(const char *host)
{
    if (host[0] == '[') return 1;
    for (const unsigned char *c = (const unsigned char *)host; *c; c++)
        if (*c < 0x80 && !isalnum(*c) && *c != '.' && *c != '-' && *c != '_') return 0;
    return 1;
}

static int format_url(url_parts *p, char *out, size_t cap, char *origin, size_t ocap)
{
    lower(p->scheme);
    lower(p->host);
    int def = scheme_port(p->scheme);
    if (def < 0 || p->host[0] == '\0' || !host_name_ok(p->host)) return -1;
    char port[16] = "";
    if (atoi(p->port) != def) snprintf(port, sizeof port, ":%s", p->port);
    const char *path = p->path[0] ? p->path : "/";
    int n = snprintf(out, cap, "%s://%s%s%s%s%s", p->scheme, p->host, port, path,
                     p->query ? "?" : "", p->query ? p->query : "");
    if (n < 0 || (size_t)n >= cap) return -1;
    if (origin) {
        n = snprintf(origin, ocap, "%s://%s:%s", p->scheme, p->host, p->port);
        if (n < 0 || (size_t)n >= ocap) return -1;
    }
    return 0;
}

static int normalize_once(const char *base, const char *href, char *out, size_t cap, char *origin,
                          size_t ocap)
{
    if (strlen(href) >= CRAWL_URL_MAX) return -1;
    CURLU *h = curl_url();
    if (h == NULL) return -1;
    url_parts p;
    memset(&p, 0, sizeof p);
    int rc = url_set(h, base, href);
    if (rc == 0) rc = parts_get(h, &p);
    if (rc == 0) rc = format_url(&p, out, cap, origin, ocap);
    parts_free(&p);
    curl_url_cleanup(h);
    return rc;
}

/* libcurl's form of a URL is not always its own form: a host it decoded
 * ("http://%3333" gives host "333") is read as a number the next time
 * ("0.0.1.77").  A URL is kept only in a form that normalises to itself,
 * so that one page never has two keys. */
int crawl_url_normalize(const char *base, const char *href, char *out, size_t cap, char *origin,
                        size_t ocap)
{
    char again[CRAWL_URL_MAX];
    if (normalize_once(base, href, out, cap, origin, ocap) != 0) return -1;
    for (int round = 0; round < 2; round++) {
        if (normalize_once(NULL, out, again, sizeof again, origin, ocap) != 0) return -1;
        if (strcmp(again, out) == 0) return 0;
        if (strlen(again) >= cap) return -1;
        memcpy(out, again, strlen(again) + 1);
    }
    return -1;
}

void crawl_url_origin(const char *url, char *origin, size_t cap)
{
    const char *host = strstr(url, "://");
    host = host ? host + 3 : url;
    size_t len = strcspn(host, "/?");
    int has_port = memchr(host, ':', len) != NULL;
    int https = strncmp(url, "https:", 6) == 0;
    snprintf(origin, cap, "%.*s%s", (int)(host - url + len), url,
             has_port ? "" : (https ? ":443" : ":80"));
}

void crawl_url_host(const char *url, char *host, size_t cap)
{
    const char *at = strstr(url, "://");
    at = at ? at + 3 : url;
    size_t len = strcspn(at, "/?");
    const char *colon = NULL; /* the port's, after any "[v6]" */
    for (size_t i = 0; i < len; i++)
        if (at[i] == ':') colon = at + i;
        else if (at[i] == ']') colon = NULL;
    if (colon) len = (size_t)(colon - at);
    snprintf(host, cap, "%.*s", (int)len, at);
}

crawl_key crawl_url_key(const char *url)
{
    char origin[CRAWL_URL_MAX + 16];
    crawl_url_origin(url, origin, sizeof origin);
    crawl_key k = {XXH64(origin, strlen(origin), 0), XXH64(url, strlen(url), 1)};
    return k;
}

int crawl_key_cmp(const void *a, const void *b)
{
    const crawl_key *x = a, *y = b;
    if (x->site != y->site) return x->site < y->site ? -1 : 1;
    return x->url < y->url ? -1 : x->url > y->url;
}

const char *crawl_url_path(const char *url)
{
    const char *host = strstr(url, "://");
    host = host ? host + 3 : url;
    const char *path = host + strcspn(host, "/?");
    return *path ? path : "/";
}

int crawl_site_partition(const void *key, size_t key_size, int partitions)
{
    uint64_t site = 0;
    memcpy(&site, key, key_size < sizeof site ? key_size : sizeof site);
    return (int)(site % (uint64_t)partitions);
}
