/*
 * crawl_robots.c — robots.txt as RFC 9309 defines it: groups of rules led
 * by user-agent lines; the crawler obeys the groups naming its product token
 * (merged), or else the "*" groups; among the rules matching a path the
 * longest pattern wins, and allow wins a tie; "*" matches any run of
 * characters and a final "$" anchors the end.  Anything that is not a
 * "key: value" line (binary junk included) is ignored.  Rules and paths are
 * compared in one normal form (RFC 9309 2.2.2, RFC 3986 6.2.2): an encoded
 * unreserved character decoded, other encodings in upper-case hex, other
 * octets outside printable ASCII encoded; so "/%70rivate/" is "/private/"
 * and a rule cannot be dodged by spelling a path differently.
 *
 * The parsed rules are stored in the crawl_robots table as a blob:
 *   u8 kind (0 rules, 1 allow all, 2 disallow all), the reason (a
 *   NUL-terminated string), then per rule u8 allow and the pattern,
 *   NUL-terminated.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "crawl_app.h"

enum { KIND_RULES = 0, KIND_ALLOW_ALL = 1, KIND_DISALLOW_ALL = 2 };

typedef struct blob {
    unsigned char *data;
    size_t len, cap;
    int failed;
} blob;

static void blob_add(blob *b, const void *bytes, size_t n)
{
    if (b->failed || n == 0) return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (cap < b->len + n) cap *= 2;
        unsigned char *d = realloc(b->data, cap);
        if (d == NULL) {
            b->failed = 1;
            return;
        }
        b->data = d, b->cap = cap;
    }
    memcpy(b->data + b->len, bytes, n);
    b->len += n;
}

static unsigned char *blob_finish(blob *b, size_t *len_out)
{
    if (b->failed) {
        free(b->data);
        return NULL;
    }
    *len_out = b->len;
    return b->data;
}

unsigned char *crawl_robots_fixed(int allow_all, const char *reason, size_t *len_out)
{
    blob b = {0};
    unsigned char kind = allow_all ? KIND_ALLOW_ALL : KIND_DISALLOW_ALL;
    blob_add(&b, &kind, 1);
    blob_add(&b, reason, strlen(reason) + 1);
    return blob_finish(&b, len_out);
}

/* ---------------------------------------------------------------- normal form */

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    c = (char)tolower((unsigned char)c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int unreserved(unsigned char c)
{
    return isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

/* RFC 3986's reserved characters ('*' and '$' among them, which is why the
 * pattern syntax survives normalising). */
static int reserved(unsigned char c)
{
    return c != '\0' && strchr(":/?#[]@!$&'()*+,;=", c) != NULL;
}

static size_t put_encoded(unsigned char c, char *out)
{
    static const char hex[] = "0123456789ABCDEF";
    out[0] = '%', out[1] = hex[c >> 4], out[2] = hex[c & 15];
    return 3;
}

char *crawl_robots_normalize(const char *path)
{
    char *out = malloc(3 * strlen(path) + 1), *o = out;
    if (out == NULL) return NULL;
    for (const char *s = path; *s; s++) {
        unsigned char c = (unsigned char)*s;
        int hi = c == '%' ? hex_value(s[1]) : -1, lo = hi >= 0 ? hex_value(s[2]) : -1;
        if (lo >= 0) { /* an escape: decoded only if unreserved */
            c = (unsigned char)(hi * 16 + lo);
            s += 2;
            if (unreserved(c)) *o++ = (char)c;
            else o += put_encoded(c, o);
        } else if (unreserved(c) || reserved(c)) {
            *o++ = (char)c;
        } else {
            o += put_encoded(c, o); /* a stray '%' is the octet '%' itself */
        }
    }
    *o = '\0';
    return out;
}

/* ---------------------------------------------------------------- parsing */

typedef struct line {
    char key[32];
    char value[1024];
} line;

static size_t trim(const char *s, size_t n, const char **start)
{
    while (n > 0 && isspace((unsigned char)*s)) s++, n--;
    while (n > 0 && isspace((unsigned char)s[n - 1])) n--;
    *start = s;
    return n;
}

/* Split one line (comment removed) into key and value; 0 when it has none. */
static int split_line(const char *s, size_t n, line *out)
{
    const char *hash = memchr(s, '#', n);
    if (hash) n = (size_t)(hash - s);
    const char *colon = memchr(s, ':', n);
    if (colon == NULL) return 0;
    const char *k, *v;
    size_t kn = trim(s, (size_t)(colon - s), &k);
    size_t vn = trim(colon + 1, n - (size_t)(colon + 1 - s), &v);
    if (kn == 0 || kn >= sizeof out->key || vn >= sizeof out->value) return 0;
    memcpy(out->key, k, kn), out->key[kn] = '\0';
    memcpy(out->value, v, vn), out->value[vn] = '\0';
    return 1;
}

/* Does a user-agent line name us?  2: our token; 1: "*"; 0: another. */
static int agent_match(const char *value, const char *agent)
{
    if (strcmp(value, "*") == 0) return 1;
    size_t n = strlen(agent);
    return strncasecmp(value, agent, n) == 0 && (value[n] == '\0' || value[n] == '/') ? 2 : 0;
}

typedef struct parse_state {
    int group_match; /* what the current group's agents matched (max) */
    int in_agents;   /* still reading the group's user-agent lines */
    int best;        /* best match seen: 2 ours, 1 star, 0 none */
    blob rules[3];   /* rules of groups matching at level 1 and 2 */
} parse_state;

static void on_line(parse_state *st, const line *l, const char *agent)
{
    if (strcasecmp(l->key, "user-agent") == 0) {
        if (!st->in_agents) st->group_match = 0;
        st->in_agents = 1;
        int m = agent_match(l->value, agent);
        if (m > st->group_match) st->group_match = m;
        if (m > st->best) st->best = m;
        return;
    }
    int allow = strcasecmp(l->key, "allow") == 0;
    if (!allow && strcasecmp(l->key, "disallow") != 0) return; /* sitemap, crawl-delay, ... */
    st->in_agents = 0;
    if (st->group_match == 0 || l->value[0] == '\0') return; /* empty rule: no restriction */
    unsigned char a = (unsigned char)allow;
    char *pattern = crawl_robots_normalize(l->value);
    blob *rules = &st->rules[st->group_match];
    if (pattern == NULL) rules->failed = 1;
    blob_add(rules, &a, 1);
    if (pattern) blob_add(rules, pattern, strlen(pattern) + 1);
    free(pattern);
}

unsigned char *crawl_robots_parse(const char *body, size_t len, const char *agent, size_t *len_out)
{
    parse_state st;
    memset(&st, 0, sizeof st);
    const char *at = body, *end = body + len;
    while (at < end) {
        const char *nl = at;
        while (nl < end && *nl != '\n' && *nl != '\r') nl++;
        line l;
        if (split_line(at, (size_t)(nl - at), &l)) on_line(&st, &l, agent);
        at = nl + 1;
    }
    blob b = {0};
    unsigned char kind = KIND_RULES;
    blob_add(&b, &kind, 1);
    blob_add(&b, "", 1);
    if (st.best > 0) blob_add(&b, st.rules[st.best].data, st.rules[st.best].len);
    b.failed |= st.rules[1].failed | st.rules[2].failed;
    free(st.rules[1].data), free(st.rules[2].data);
    return blob_finish(&b, len_out);
}

/* ---------------------------------------------------------------- matching */

/*
 * Does pattern match the start of path ('*' any run, final '$' the end)?
 * Matching goes left to right and, on a mismatch, lets the last '*' take one
 * more character: a later '*' can absorb anything an earlier one would, so
 * no other choice needs revisiting.  That bounds the work by
 * strlen(pat) * strlen(path); trying every split recursively was exponential
 * in the number of stars ("a*a*a*a*b" against a long run of 'a'), so one
 * hostile robots.txt could stall a fetcher (found by fuzz_crawl).
 */
static int pattern_match(const char *pat, const char *path)
{
    size_t plen = strlen(pat), p = 0, after_star = SIZE_MAX;
    int anchored = plen > 0 && pat[plen - 1] == '$';
    if (anchored) plen--;
    const char *s = path, *star_from = NULL;
    for (;;) {
        if (p < plen && pat[p] == '*') {
            after_star = ++p;
            star_from = s;
            continue;
        }
        if (p == plen && (!anchored || *s == '\0')) return 1;
        if (p < plen && *s != '\0' && pat[p] == *s) {
            p++;
            s++;
            continue;
        }
        if (after_star == SIZE_MAX || *star_from == '\0') return 0;
        s = ++star_from; /* the last star takes one more character */
        p = after_star;
    }
}

static size_t skip_string(const unsigned char *blob, size_t at, size_t len)
{
    while (at < len && blob[at] != '\0') at++;
    return at < len ? at + 1 : len;
}

/* The rules' verdict on a path in normal form. */
static int rules_allow(const unsigned char *blob, size_t len, const char *path)
{
    size_t at = skip_string(blob, 1, len), best = 0;
    int allowed = 1;
    while (at + 1 < len) {
        int allow = blob[at];
        const char *pat = (const char *)blob + at + 1;
        size_t next = skip_string(blob, at + 1, len);
        if (next > len || blob[next - 1] != '\0') break; /* a truncated blob: stop */
        size_t plen = strlen(pat);
        if (pattern_match(pat, path) && (plen > best || (plen == best && allow))) {
            best = plen;
            allowed = allow;
        }
        at = next;
    }
    return allowed;
}

int crawl_robots_allows(const unsigned char *blob, size_t len, const char *path)
{
    if (len == 0 || strcmp(path, "/robots.txt") == 0) return 1;
    if (blob[0] != KIND_RULES) return blob[0] == KIND_ALLOW_ALL;
    char *normal = crawl_robots_normalize(path);
    if (normal == NULL) return 0; /* out of memory: the safe answer */
    int allowed = rules_allow(blob, len, normal);
    free(normal);
    return allowed;
}

const char *crawl_robots_reason(const unsigned char *blob, size_t len)
{
    if (len < 2 || memchr(blob + 1, '\0', len - 1) == NULL) return "";
    return (const char *)blob + 1;
}
