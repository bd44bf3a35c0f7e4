/*
 * crawl_scope.c — what the crawler may contact.  A page can link anywhere,
 * so without limits one hostile page turns the crawler into a proxy into
 * the network it runs in (a cloud's metadata service at 169.254.169.254, a
 * database on 10.x): two checks close that door.
 *
 * Scope, checked when a link or redirect is found: by default only URLs on
 * the seeds' hosts (any scheme and port) and the hosts of --allow-hosts
 * ("*.example.org" for its subdomains) are crawled; --scope any lifts it.
 *
 * Address, checked when a connection opens (libcurl's open-socket hook, so
 * it is the address resolved for this very connection, redirect targets and
 * renamed hosts alike): loopback, private, link-local and the other
 * non-public ranges are refused unless --allow-addresses names them.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "crawl_app.h"

/* ---------------------------------------------------------------- addresses */

/* An address in IPv6 form (IPv4 as ::ffff:a.b.c.d), and a prefix of one. */
typedef struct crawl_net {
    unsigned char a[16];
    int bits;
} net;

static const unsigned char v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};

static int in_net(const unsigned char *a, const net *n)
{
    int full = n->bits / 8, rest = n->bits % 8;
    if (memcmp(a, n->a, (size_t)full) != 0) return 0;
    unsigned char mask = (unsigned char)(0xff << (8 - rest));
    return rest == 0 || (a[full] & mask) == (n->a[full] & mask);
}

/* The non-public ranges, IPv4 ones as mapped IPv6 prefixes (96 + bits). */
static const struct {
    const char *prefix;
    int bits;
    const char *what;
} refused[] = {
    {"::ffff:0.0.0.0", 104, "an unspecified"}, /* 0/8: 0.0.0.0 reaches this host */
    {"::ffff:10.0.0.0", 104, "a private"},
    {"::ffff:100.64.0.0", 106, "a shared (carrier NAT)"},
    {"::ffff:127.0.0.0", 104, "a loopback"},
    {"::ffff:169.254.0.0", 112, "a link-local"},
    {"::ffff:172.16.0.0", 108, "a private"},
    {"::ffff:192.168.0.0", 112, "a private"},
    {"::ffff:224.0.0.0", 99, "a multicast or reserved"},
    {"::", 128, "an unspecified"},
    {"::1", 128, "a loopback"},
    {"fc00::", 7, "a private (unique local)"},
    {"fe80::", 10, "a link-local"},
    {"fec0::", 10, "a site-local"},
    {"ff00::", 8, "a multicast"},
};

/* The IPv6 form of a socket address; 0 if it is neither IPv4 nor IPv6. */
static int to_v6(const struct sockaddr *sa, unsigned char a[16])
{
    if (sa->sa_family == AF_INET) {
        memcpy(a, v4_mapped, 12);
        memcpy(a + 12, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
        return 1;
    }
    if (sa->sa_family != AF_INET6) return 0;
    memcpy(a, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
    /* NAT64 (64:ff9b::/96) carries an IPv4 address: judge that one */
    if (memcmp(a, nat64, 12) == 0) memcpy(a, v4_mapped, 12);
    return 1;
}

static void print_addr(const unsigned char a[16], char *out, size_t cap)
{
    if (memcmp(a, v4_mapped, 12) == 0) inet_ntop(AF_INET, a + 12, out, (socklen_t)cap);
    else inet_ntop(AF_INET6, a, out, (socklen_t)cap);
}

int crawl_scope_refuses(const crawl_scope *s, const struct sockaddr *sa, char *why, size_t cap)
{
    unsigned char a[16];
    char text[INET6_ADDRSTRLEN];
    if (!to_v6(sa, a)) {
        snprintf(why, cap, "not an IP address");
        return 1;
    }
    for (size_t i = 0; i < s->nnets; i++)
        if (in_net(a, &s->nets[i])) return 0;
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        net n = {{0}, refused[i].bits};
        inet_pton(AF_INET6, refused[i].prefix, n.a);
        if (!in_net(a, &n)) continue;
        print_addr(a, text, sizeof text);
        snprintf(why, cap, "%s is %s address (see --allow-addresses)", text, refused[i].what);
        return 1;
    }
    return 0;
}

/* "ADDR" or "ADDR/BITS", IPv4 or IPv6, into n; -1 if malformed. */
static int parse_net(const char *item, net *n)
{
    char text[64];
    const char *slash = strchr(item, '/');
    size_t len = slash ? (size_t)(slash - item) : strlen(item);
    if (len == 0 || len >= sizeof text) return -1;
    memcpy(text, item, len), text[len] = '\0';
    int v4 = inet_pton(AF_INET, text, n->a + 12) == 1, max = v4 ? 32 : 128;
    if (v4) memcpy(n->a, v4_mapped, 12);
    else if (inet_pton(AF_INET6, text, n->a) != 1) return -1;
    n->bits = max;
    if (slash) {
        char *end;
        long bits = strtol(slash + 1, &end, 10);
        if (!isdigit((unsigned char)slash[1]) || *end != '\0' || bits > max) return -1;
        n->bits = (int)bits;
    }
    if (v4) n->bits += 96;
    return 0;
}

/* ---------------------------------------------------------------- hosts */

static int add_host(crawl_scope *s, const char *host, size_t len)
{
    if (s->nhosts == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        char **grown = realloc(s->hosts, cap * sizeof *grown);
        if (grown == NULL) return -1;
        s->hosts = grown, s->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (copy == NULL) return -1;
    for (size_t i = 0; i < len; i++) copy[i] = (char)tolower((unsigned char)host[i]);
    copy[len] = '\0';
    s->hosts[s->nhosts++] = copy;
    return 0;
}

/* An --allow-hosts entry: a host name, "*.NAME", an IPv4 or a bracketed
 * IPv6 literal; 0 if it is something else (a URL, a port, a space). */
static int host_entry_ok(const char *h, size_t len)
{
    if (len == 0 || (len == 2 && h[0] == '*')) return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)h[i];
        int ok = isalnum(c) || c == '-' || c == '.' || c == '_' || (c == '*' && i == 0);
        if (h[0] == '[') ok = ok || c == ':' || c == '[' || c == ']';
        if (!ok) return 0;
    }
    return h[0] != '*' || h[1] == '.';
}

/* Split a comma-separated list, calling fn on each item (NUL-terminated). */
static int each_item(const char *list, int (*fn)(crawl_scope *, const char *, size_t),
                     crawl_scope *s)
{
    for (const char *at = list;;) {
        size_t len = strcspn(at, ",");
        if (fn(s, at, len) != 0) return -1;
        if (at[len] == '\0') return 0;
        at += len + 1;
    }
}

static int on_host(crawl_scope *s, const char *h, size_t len)
{
    if (!host_entry_ok(h, len)) {
        app_error(CRAWL_APP, "option --allow-hosts: not a host name: '%.*s'", (int)len, h);
        return -1;
    }
    return add_host(s, h, len);
}

static int on_net(crawl_scope *s, const char *item, size_t len)
{
    char text[80];
    net n;
    snprintf(text, sizeof text, "%.*s", (int)(len < 79 ? len : 79), item);
    if (len >= 79 || parse_net(text, &n) != 0) {
        app_error(CRAWL_APP, "option --allow-addresses: not an address or ADDRESS/BITS: '%s'",
                  text);
        return -1;
    }
    net *grown = realloc(s->nets, (s->nnets + 1) * sizeof n);
    if (grown == NULL) return -1;
    grown[s->nnets++] = n;
    s->nets = grown;
    return 0;
}

int crawl_scope_init(crawl_scope *s, const crawl_opts *o)
{
    memset(s, 0, sizeof *s);
    s->any = o->scope && strcmp(o->scope, "any") == 0;
    if (o->scope && !s->any && strcmp(o->scope, "seeds") != 0) {
        app_error(CRAWL_APP, "option --scope: expected seeds or any, got '%s'", o->scope);
        return -1;
    }
    if (o->allow_hosts && each_item(o->allow_hosts, on_host, s) != 0) return -1;
    if (o->allow_addresses && each_item(o->allow_addresses, on_net, s) != 0) return -1;
    return 0;
}

int crawl_scope_add_seed(const char *url, void *scope)
{
    char host[CRAWL_URL_MAX];
    crawl_url_host(url, host, sizeof host);
    return add_host(scope, host, strlen(host));
}

static int host_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void crawl_scope_finish(crawl_scope *s)
{
    if (s->nhosts > 1) qsort(s->hosts, s->nhosts, sizeof *s->hosts, host_cmp);
}

static int has_host(const crawl_scope *s, const char *host)
{
    return s->nhosts > 0 && bsearch(&host, s->hosts, s->nhosts, sizeof *s->hosts, host_cmp);
}

int crawl_scope_allows(const crawl_scope *s, const char *url)
{
    char host[CRAWL_URL_MAX], star[CRAWL_URL_MAX + 2];
    if (s->any) return 1;
    crawl_url_host(url, host, sizeof host);
    if (has_host(s, host)) return 1;
    /* "*.example.org" names a.example.org and a.b.example.org */
    for (const char *dot = strchr(host, '.'); dot; dot = strchr(dot + 1, '.')) {
        snprintf(star, sizeof star, "*%s", dot);
        if (has_host(s, star)) return 1;
    }
    return 0;
}

void crawl_scope_free(crawl_scope *s)
{
    for (size_t i = 0; i < s->nhosts; i++) free(s->hosts[i]);
    free(s->hosts);
    free(s->nets);
    memset(s, 0, sizeof *s);
}
