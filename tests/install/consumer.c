/*
 * consumer.c — the smallest program outside the tree that uses an installed
 * tessera: it must compile against the installed headers, link the installed
 * libtessera.so, and load the library version it was compiled for.
 */
#include <stdio.h>
#include <string.h>

#include <tessera/tessera.h>

int main(void)
{
    const char *version = tess_version();

    printf("tessera %s (headers %s)\n", version ? version : "(null)", TESS_VERSION_STRING);
    if (version == NULL || strcmp(version, TESS_VERSION_STRING) != 0) {
        fprintf(stderr, "consumer: library version does not match the headers\n");
        return 1;
    }
    return 0;
}
