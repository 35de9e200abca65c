/* programs.c: loads the fuzz target's formats (see programs.h). */
#include "programs.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FIELDS = 6, PATH_MAX_LEN = 4096 };

typedef struct bytes {
    uint8_t *data;
    size_t len;
} bytes;

static int fail(char *why, size_t why_len, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(why, why_len, fmt, args);
    va_end(args);
    return 1;
}

/* The whole file, NUL-terminated (not counted in len). */
static int read_file(const char *dir, const char *name, bytes *out) {
    char path[PATH_MAX_LEN];
    FILE *f;
    long size;
    out->data = NULL;
    out->len = 0;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) return 1;
    f = fopen(path, "rb");
    if (!f) return 1;
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return 1;
    }
    out->data = (uint8_t *)malloc((size_t)size + 1);
    if (!out->data || fread(out->data, 1, (size_t)size, f) != (size_t)size) {
        free(out->data);
        out->data = NULL;
        fclose(f);
        return 1;
    }
    fclose(f);
    out->data[size] = 0;
    out->len = (size_t)size;
    return 0;
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* Decodes a hex field in place (the bytes land at its start); the decoded length, or -1. */
static long unhex(char *text) {
    size_t n = strlen(text), k;
    if (n % 2) return -1;
    for (k = 0; k < n; k += 2) {
        int hi = hex_digit(text[k]), lo = hex_digit(text[k + 1]);
        if (hi < 0 || lo < 0) return -1;
        text[k / 2] = (char)(hi * 16 + lo);
    }
    return (long)(n / 2);
}

/* Splits s at sep in place: the pieces, at most max. */
static size_t split(char *s, char sep, char **pieces, size_t max) {
    size_t n = 0;
    while (n < max) {
        char *end = strchr(s, sep);
        pieces[n++] = s;
        if (!end) break;
        *end = 0;
        s = end + 1;
    }
    return n;
}

static int load_program(const char *dir, const char *file, fuzz_program *out, char *why,
                        size_t why_len) {
    bytes blob;
    const char *where = NULL;
    tp_status st;
    if (read_file(dir, file, &blob)) return fail(why, why_len, "cannot read %s/%s", dir, file);
    st = tp_program_new(blob.data, blob.len, &out->program, &where);
    free(blob.data);
    if (st != TP_OK)
        return fail(why, why_len, "%s/%s: not a program (%s)", dir, file, where ? where : "?");
    return 0;
}

/* Flags the program strings that are one of the markers. */
static int flag_markers(fuzz_program *p, char **markers, const size_t *lens, size_t n) {
    uint32_t count = 0, k;
    while (tp_program_string(p->program, count, NULL)) count++;
    p->n_strings = count;
    p->special_flags = (uint8_t *)calloc(count ? count : 1, 1);
    if (!p->special_flags) return 1;
    for (k = 0; k < count; k++) {
        uint32_t len;
        const uint8_t *s = tp_program_string(p->program, k, &len);
        size_t m;
        for (m = 0; m < n; m++) {
            if (lens[m] == len && memcmp(markers[m], s, len) == 0) p->special_flags[k] = 1;
        }
    }
    return 0;
}

/* The vocab: the 256 single bytes, then each marker as a special token. */
static int build_vocab(fuzz_format *f, char **markers, const size_t *lens, size_t n) {
    size_t total = 256, k;
    uint8_t *table, *special;
    uint32_t *offsets;
    int failed;
    for (k = 0; k < n; k++) total += lens[k];
    table = (uint8_t *)malloc(total);
    offsets = (uint32_t *)malloc((256 + n + 1) * sizeof *offsets);
    special = (uint8_t *)calloc(256 + n, 1);
    failed = !table || !offsets || !special;
    if (!failed) {
        size_t at = 0;
        for (k = 0; k < 256; k++) {
            offsets[k] = (uint32_t)at;
            table[at++] = (uint8_t)k;
        }
        for (k = 0; k < n; k++) {
            offsets[256 + k] = (uint32_t)at;
            memcpy(table + at, markers[k], lens[k]);
            at += lens[k];
            special[256 + k] = 1;
        }
        offsets[256 + n] = (uint32_t)at;
        failed =
            tp_vocab_new(table, total, offsets, special, (uint32_t)(256 + n), &f->vocab) != TP_OK;
    }
    free(table);
    free(offsets);
    free(special);
    f->n_markers = (uint32_t)n;
    return failed;
}

static int load_format(const char *dir, char *line, fuzz_format *f, char *why, size_t why_len) {
    char *fields[FIELDS], *markers[256], *entries[FUZZ_MAX_ENTRIES + 1];
    size_t lens[256], n_markers = 0, k;
    if (split(line, ' ', fields, FIELDS) != FIELDS || strchr(fields[FIELDS - 1], ' '))
        return fail(why, why_len, "manifest line for %s: not %d fields", fields[0], FIELDS);
    if (strlen(fields[0]) >= FUZZ_MAX_NAME) return fail(why, why_len, "format name too long");
    strcpy(f->name, fields[0]);
    if (load_program(dir, fields[1], &f->normal, why, why_len)) return 1;
    if (strcmp(fields[2], "-") != 0 && load_program(dir, fields[2], &f->repair, why, why_len))
        return 1;
    if (strcmp(fields[3], "-") != 0) {
        bytes blob;
        tp_status st;
        if (read_file(dir, fields[3], &blob))
            return fail(why, why_len, "cannot read %s/%s", dir, fields[3]);
        st = tp_tools_new(blob.data, blob.len, &f->tools);
        free(blob.data);
        if (st != TP_OK) return fail(why, why_len, "%s: not a tool table", fields[3]);
    }
    f->n_entries = split(fields[4], ',', entries, FUZZ_MAX_ENTRIES + 1);
    if (f->n_entries > FUZZ_MAX_ENTRIES) return fail(why, why_len, "%s: too many entries", f->name);
    for (k = 0; k < f->n_entries; k++) {
        if (strlen(entries[k]) >= FUZZ_MAX_NAME) return fail(why, why_len, "entry name too long");
        strcpy(f->entries[k], entries[k]);
        if (tp_program_entry(f->normal.program, entries[k], strlen(entries[k])) < 0)
            return fail(why, why_len, "%s: no entry %s", f->name, entries[k]);
    }
    if (strcmp(fields[5], "-") != 0) {
        n_markers = split(fields[5], ',', markers, 256);
        for (k = 0; k < n_markers; k++) {
            long n = unhex(markers[k]);
            if (n <= 0) return fail(why, why_len, "%s: bad marker field", f->name);
            lens[k] = (size_t)n;
        }
    }
    if (flag_markers(&f->normal, markers, lens, n_markers) ||
        (f->repair.program && flag_markers(&f->repair, markers, lens, n_markers)) ||
        build_vocab(f, markers, lens, n_markers))
        return fail(why, why_len, "%s: out of memory", f->name);
    return 0;
}

int fuzz_formats_load(const char *dir, fuzz_formats *out, char *why, size_t why_len) {
    bytes manifest;
    char *line, *next;
    size_t n_lines = 0, k;
    out->items = NULL;
    out->len = 0;
    if (read_file(dir, "manifest.txt", &manifest))
        return fail(why, why_len, "cannot read %s/manifest.txt", dir);
    for (k = 0; k < manifest.len; k++) n_lines += manifest.data[k] == '\n';
    out->items = (fuzz_format *)calloc(n_lines + 1, sizeof *out->items);
    if (!out->items) {
        free(manifest.data);
        return fail(why, why_len, "out of memory");
    }
    for (line = (char *)manifest.data; *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        else
            next = line + strlen(line);
        if (!*line) continue;
        if (load_format(dir, line, &out->items[out->len++], why, why_len)) {
            free(manifest.data);
            fuzz_formats_free(out);
            return 1;
        }
    }
    free(manifest.data);
    if (!out->len) return fail(why, why_len, "%s/manifest.txt lists no format", dir);
    return 0;
}

static void free_program(fuzz_program *p) {
    tp_program_free(p->program);
    free(p->special_flags);
}

void fuzz_formats_free(fuzz_formats *f) {
    size_t k;
    for (k = 0; k < f->len; k++) {
        free_program(&f->items[k].normal);
        free_program(&f->items[k].repair);
        tp_tools_free(f->items[k].tools);
        tp_vocab_free(f->items[k].vocab);
    }
    free(f->items);
    f->items = NULL;
    f->len = 0;
}
