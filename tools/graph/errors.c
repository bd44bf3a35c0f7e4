/*
 * errors.c — one-line error messages for the graph readers and generators.
 * Every message ends up in a caller's buffer and often on a terminal, so it
 * must never contain a newline or raw binary from a corrupt file.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "graph_internal.h"

#define TG__QUOTE_MAX 60

int tg__err(int status, char *err, size_t errlen, const char *fmt, ...)
{
    if (err == NULL || errlen == 0) return status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    for (char *p = err; *p != '\0'; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = ' ';
    return status;
}

void tg__quote_line(const char *text, size_t len, char *out, size_t outlen)
{
    size_t n = len > TG__QUOTE_MAX ? TG__QUOTE_MAX : len;
    size_t k = 0;
    if (outlen == 0) return;
    for (size_t i = 0; i < n && k + 1 < outlen; i++) {
        unsigned char c = (unsigned char)text[i];
        out[k++] = (c == '\t' || (c >= 0x20 && c < 0x7f)) ? (char)c : '?';
    }
    if (len > n)
        for (int i = 0; i < 3 && k + 1 < outlen; i++) out[k++] = '.';
    out[k] = '\0';
}
