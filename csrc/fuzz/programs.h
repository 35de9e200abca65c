/* programs.h: the formats the fuzz target runs, loaded from the directory
 * csrc/fuzz/dump_programs.py writes (its manifest.txt says what is there). */
#ifndef TOOLPARSE_FUZZ_PROGRAMS_H
#define TOOLPARSE_FUZZ_PROGRAMS_H

#include "toolparse.h"

#define FUZZ_MAX_ENTRIES 4
#define FUZZ_MAX_NAME 64

/* One program of a format with what feeding it token ids needs. */
typedef struct fuzz_program {
    tp_program *program;
    uint8_t *special_flags; /* per program string: it is one of the format's markers */
    uint32_t n_strings;
} fuzz_program;

typedef struct fuzz_format {
    char name[FUZZ_MAX_NAME];
    fuzz_program normal;
    fuzz_program repair; /* program NULL when the format has no repair mode */
    tp_tools *tools;     /* NULL when the format has no fixture tools */
    char entries[FUZZ_MAX_ENTRIES][FUZZ_MAX_NAME];
    size_t n_entries;
    /* token ids: 0-255 the single bytes, then the markers as special tokens */
    tp_vocab *vocab;
    uint32_t n_markers;
} fuzz_format;

typedef struct fuzz_formats {
    fuzz_format *items;
    size_t len;
} fuzz_formats;

/* Loads every format listed in dir/manifest.txt.  On failure returns nonzero with a
 * message in why (why_len bytes at most). */
int fuzz_formats_load(const char *dir, fuzz_formats *out, char *why, size_t why_len);
void fuzz_formats_free(fuzz_formats *f);

#endif
