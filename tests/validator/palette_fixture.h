/* palette_fixture — the validator tests' shared cmocka group set-up: the
 * project's own proto/palette.yaml, loaded once per group into s_palette. */
#ifndef BMQ_TEST_PALETTE_FIXTURE_H
#define BMQ_TEST_PALETTE_FIXTURE_H

#include <stdio.h>

#include "palette.h"

#define PALETTE_PATH BMQ_SOURCE_DIR "/proto/palette.yaml"

static bmq_palette_t *s_palette;

static int s_setup (void **state)
{
    (void) state;
    char err[512];
    s_palette = bmq_palette_load (PALETTE_PATH, err, sizeof err);
    if (!s_palette) fprintf (stderr, "palette: %s\n", err);
    return s_palette ? 0 : -1;
}

static int s_teardown (void **state)
{
    (void) state;
    bmq_palette_destroy (&s_palette);
    return 0;
}

#endif
