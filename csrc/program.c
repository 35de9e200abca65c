/* program.c: loads and checks a compiled format program.  Every value read from the blob
 * is bounds-checked, so a corrupt or hostile blob is an error, never a crash. */
#include "program.h"

#include <string.h>

#include "alloc.h"
#include "reader.h"

struct tp_program {
    uint32_t n_code;
    uint32_t *code;
    uint32_t n_strings;
    uint32_t *string_off; /* n_strings + 1 offsets into pool */
    uint8_t *pool;
    uint32_t n_stopsets;
    tp_stopset *stopsets;
    uint32_t *follow_pool;
    uint32_t n_entries;
    uint32_t *entry_name_off; /* n_entries + 1 offsets into names */
    uint8_t *names;
    uint32_t *entry_addr;
    uint32_t max_follow;
    tp_allocator alloc;
};

void tp_program_free(tp_program *p) {
    tp_allocator a;
    uint32_t k;
    if (!p) return;
    a = p->alloc;
    if (p->stopsets) {
        for (k = 0; k < p->n_stopsets; k++) {
            tp_trie_free(p->stopsets[k].trie);
            tp_free(&a, p->stopsets[k].stops);
        }
    }
    tp_free(&a, p->stopsets);
    tp_free(&a, p->follow_pool);
    tp_free(&a, p->code);
    tp_free(&a, p->string_off);
    tp_free(&a, p->pool);
    tp_free(&a, p->entry_name_off);
    tp_free(&a, p->names);
    tp_free(&a, p->entry_addr);
    tp_free(&a, p);
}

/* Every jump target must be an instruction start; every operand in range. */
static tp_status check_code(const tp_program *p, const char **where) {
    uint8_t *starts;
    uint32_t pc = 0, k;
    int ok = 1;
    if (p->n_code == 0) {
        *where = "empty code";
        return TP_ERR_ARG;
    }
    starts = (uint8_t *)tp_alloc_zeroed(&p->alloc, p->n_code);
    if (!starts) return TP_ERR_NOMEM;
    while (pc < p->n_code) {
        uint32_t op = p->code[pc];
        if (op >= TP_OP_COUNT || pc + tp_op_operands(op) >= p->n_code) {
            *where = "bad opcode or truncated instruction";
            ok = 0;
            break;
        }
        starts[pc] = 1;
        pc += 1u + tp_op_operands(op);
    }
    if (ok && pc != p->n_code) {
        *where = "truncated instruction";
        ok = 0;
    }
    for (pc = 0; ok && pc < p->n_code; pc += 1u + tp_op_operands(p->code[pc])) {
        uint32_t op = p->code[pc], a = tp_op_operands(op) ? p->code[pc + 1] : 0;
        switch (op) {
        case TP_OP_LIT:
        case TP_OP_CONST:
            if (a >= p->n_strings || p->string_off[a + 1] == p->string_off[a]) {
                *where = "LIT or CONST string out of range";
                ok = 0;
            }
            break;
        case TP_OP_CHARS:
            if (a >= p->n_strings ||
                p->string_off[a + 1] - p->string_off[a] != TP_CHARS_SET_BYTES) {
                *where = "CHARS byte set out of range";
                ok = 0;
            }
            break;
        case TP_OP_UNTIL:
            if (a >= p->n_stopsets) {
                *where = "UNTIL stop set out of range";
                ok = 0;
            }
            break;
        case TP_OP_JSON:
            if ((a & 0xFF) > 2 || (a >> 8 & 0xFF) > TP_JSON_KIND_OBJECT ||
                (a >> 16) > TP_JSON_CLOSE_AT_END) {
                *where = "JSON dialect or kind out of range";
                ok = 0;
            }
            break;
        case TP_OP_TOPEN:
            if (a >= TP_ROLE_COUNT || p->code[pc + 2] > TP_DECODE_MINIMAX_M3) {
                *where = "TOPEN role or decode out of range";
                ok = 0;
            }
            break;
        case TP_OP_CHOICE:
        case TP_OP_COMMIT:
        case TP_OP_PCOMMIT:
        case TP_OP_BCOMMIT:
        case TP_OP_JMP:
        case TP_OP_CALL:
        case TP_OP_RECOVER:
            if (a >= p->n_code || !starts[a]) {
                *where = "jump target is not an instruction";
                ok = 0;
            }
            break;
        default:
            break;
        }
    }
    for (k = 0; ok && k < p->n_entries; k++) {
        if (p->entry_addr[k] >= p->n_code || !starts[p->entry_addr[k]]) {
            *where = "entry is not an instruction";
            ok = 0;
        }
    }
    tp_free(&p->alloc, starts);
    return ok ? TP_OK : TP_ERR_ARG;
}

/* The blob, section by section: "TPG1", four counts, the code, the strings, the stop sets,
 * the entries.  Each reader returns TP_ERR_ARG for a malformed section and leaves what it
 * allocated in p, which frees it. */

static tp_status read_header(tp_reader *r, tp_program *p) {
    (void)tp_read_bytes(r, 4); /* the magic, which the caller checked */
    p->n_code = tp_read_u32(r);
    p->n_strings = tp_read_u32(r);
    p->n_stopsets = tp_read_u32(r);
    p->n_entries = tp_read_u32(r);
    /* what the counts ask to allocate is bounded by what the blob holds */
    if (r->bad || p->n_code > (size_t)(r->end - r->p) / 4) return TP_ERR_ARG;
    return TP_OK;
}

/* The code, and an END after it: code whose last instruction falls through (only a corrupt
 * blob's) then stops there instead of running past the end. */
static tp_status read_code(tp_reader *r, tp_program *p) {
    uint32_t k;
    p->code = (uint32_t *)tp_alloc_array(&p->alloc, (size_t)p->n_code + 1, sizeof(uint32_t));
    if (!p->code) return TP_ERR_NOMEM;
    for (k = 0; k < p->n_code; k++) p->code[k] = tp_read_u32(r);
    p->code[p->n_code] = TP_OP_END;
    return TP_OK;
}

/* Strings (u32 length, bytes) into one pool: a first pass sizes it. */
static tp_status read_strings(tp_reader *r, tp_program *p) {
    tp_reader peek = *r;
    uint32_t k, total = 0;
    for (k = 0; k < p->n_strings; k++) {
        uint32_t n = tp_read_u32(&peek);
        if (!tp_read_bytes(&peek, n) || n > TP_TRIE_MAX_MARKER_LEN) return TP_ERR_ARG;
        total += n;
    }
    if (peek.bad) return TP_ERR_ARG;
    p->string_off =
        (uint32_t *)tp_alloc_array(&p->alloc, (size_t)p->n_strings + 1, sizeof(uint32_t));
    p->pool = (uint8_t *)tp_alloc(&p->alloc, total);
    if (!p->string_off || !p->pool) return TP_ERR_NOMEM;
    total = 0;
    for (k = 0; k < p->n_strings; k++) {
        uint32_t n = tp_read_u32(r);
        const uint8_t *s = tp_read_bytes(r, n);
        if (!s) return TP_ERR_ARG;
        p->string_off[k] = total;
        memcpy(p->pool + total, s, n);
        total += n;
    }
    p->string_off[p->n_strings] = total;
    return TP_OK;
}

/* The automaton over a stop set's markers, in order. */
static tp_status build_stop_trie(tp_program *p, tp_stopset *set) {
    const uint8_t **markers =
        (const uint8_t **)tp_alloc_array(&p->alloc, set->n_stops, sizeof(uint8_t *));
    size_t *lens = (size_t *)tp_alloc_array(&p->alloc, set->n_stops, sizeof(size_t));
    uint32_t j;
    tp_status st = TP_ERR_NOMEM;
    if (markers && lens) {
        for (j = 0; j < set->n_stops; j++) {
            uint32_t m = set->stops[j].marker;
            markers[j] = p->pool + p->string_off[m];
            lens[j] = p->string_off[m + 1] - p->string_off[m];
        }
        st = tp_trie_new_with(&p->alloc, markers, lens, set->n_stops, &set->trie, NULL);
        if (st != TP_OK && st != TP_ERR_NOMEM) st = TP_ERR_ARG;
    }
    tp_free(&p->alloc, (void *)markers);
    tp_free(&p->alloc, lens);
    return st;
}

/* Stop sets: per set u32 n_stops; per stop its marker (a string index), u32 n_follow and
 * that many follow strings; where n_follow has TP_DECLARED_FOLLOW set, u32 n_declared and
 * two string indices for each declared_param(): its prefix (or TP_NO_STRING) and end.  A
 * first pass sizes the one pool of follow and declared indices. */
static tp_status read_stopsets(tp_reader *r, tp_program *p) {
    tp_reader peek = *r;
    uint32_t k, j, n_follow_total = 0;
    for (k = 0; k < p->n_stopsets; k++) {
        uint32_t n_stops = tp_read_u32(&peek);
        if (peek.bad || n_stops == 0 || n_stops > TP_TRIE_MAX_MARKERS) return TP_ERR_ARG;
        for (j = 0; j < n_stops; j++) {
            uint32_t nf, n_decl = 0, declared;
            (void)tp_read_u32(&peek);
            nf = tp_read_u32(&peek);
            declared = nf & TP_DECLARED_FOLLOW;
            nf &= ~TP_DECLARED_FOLLOW;
            if (nf > 1024 || !tp_read_bytes(&peek, nf * 4u)) return TP_ERR_ARG;
            if (declared) {
                n_decl = tp_read_u32(&peek);
                if (n_decl == 0 || n_decl > TP_MAX_DECLARED || !tp_read_bytes(&peek, n_decl * 8u))
                    return TP_ERR_ARG;
            }
            n_follow_total += nf + 2u * n_decl;
        }
    }
    p->stopsets = (tp_stopset *)tp_alloc_array_zeroed(&p->alloc, p->n_stopsets, sizeof(tp_stopset));
    p->follow_pool = (uint32_t *)tp_alloc_array(&p->alloc, n_follow_total, sizeof(uint32_t));
    if (!p->stopsets || !p->follow_pool) return TP_ERR_NOMEM;
    n_follow_total = 0;
    for (k = 0; k < p->n_stopsets; k++) {
        tp_stopset *set = &p->stopsets[k];
        set->n_stops = tp_read_u32(r);
        set->stops = (tp_stop *)tp_alloc_array_zeroed(&p->alloc, set->n_stops, sizeof(tp_stop));
        if (!set->stops) return TP_ERR_NOMEM;
        for (j = 0; j < set->n_stops; j++) {
            uint32_t f, declared;
            tp_stop *s = &set->stops[j];
            s->marker = tp_read_u32(r);
            s->n_follow = tp_read_u32(r);
            declared = s->n_follow & TP_DECLARED_FOLLOW;
            s->n_follow &= ~TP_DECLARED_FOLLOW;
            if (s->marker >= p->n_strings) return TP_ERR_ARG;
            s->follow = p->follow_pool + n_follow_total;
            for (f = 0; f < s->n_follow; f++) {
                uint32_t idx = tp_read_u32(r);
                uint32_t flen;
                if (idx >= p->n_strings) return TP_ERR_ARG;
                flen = p->string_off[idx + 1] - p->string_off[idx];
                if (flen == 0) return TP_ERR_ARG;
                if (flen > p->max_follow) p->max_follow = flen;
                p->follow_pool[n_follow_total++] = idx;
            }
            if (declared) {
                s->n_declared = tp_read_u32(r);
                s->declared = p->follow_pool + n_follow_total;
                for (f = 0; f < s->n_declared; f++) {
                    uint32_t prefix = tp_read_u32(r), end = tp_read_u32(r);
                    if ((prefix != TP_NO_STRING && prefix >= p->n_strings) || end >= p->n_strings ||
                        p->string_off[end + 1] == p->string_off[end])
                        return TP_ERR_ARG;
                    p->follow_pool[n_follow_total++] = prefix;
                    p->follow_pool[n_follow_total++] = end;
                }
            }
        }
        TP_TRY(build_stop_trie(p, set));
    }
    return TP_OK;
}

/* Entries: per entry its name (u32 length, bytes) and u32 address.  A first pass sizes
 * the names. */
static tp_status read_entries(tp_reader *r, tp_program *p) {
    tp_reader peek = *r;
    uint32_t k, total = 0;
    for (k = 0; k < p->n_entries; k++) {
        uint32_t n = tp_read_u32(&peek);
        if (!tp_read_bytes(&peek, n)) return TP_ERR_ARG;
        (void)tp_read_u32(&peek);
        total += n;
    }
    if (peek.bad) return TP_ERR_ARG;
    p->entry_name_off =
        (uint32_t *)tp_alloc_array(&p->alloc, (size_t)p->n_entries + 1, sizeof(uint32_t));
    p->names = (uint8_t *)tp_alloc(&p->alloc, total);
    p->entry_addr = (uint32_t *)tp_alloc_array(&p->alloc, p->n_entries, sizeof(uint32_t));
    if (!p->entry_name_off || !p->names || !p->entry_addr) return TP_ERR_NOMEM;
    total = 0;
    for (k = 0; k < p->n_entries; k++) {
        uint32_t n = tp_read_u32(r);
        const uint8_t *s = tp_read_bytes(r, n);
        if (!s) return TP_ERR_ARG;
        p->entry_name_off[k] = total;
        memcpy(p->names + total, s, n);
        total += n;
        p->entry_addr[k] = tp_read_u32(r);
    }
    p->entry_name_off[p->n_entries] = total;
    return TP_OK;
}

tp_status tp_program_new(const uint8_t *blob, size_t len, tp_program **out, const char **where) {
    return tp_program_new_with(NULL, blob, len, out, where);
}

tp_status tp_program_new_with(const tp_allocator *alloc, const uint8_t *blob, size_t len,
                              tp_program **out, const char **where) {
    tp_allocator a;
    tp_reader r;
    tp_program *p;
    const char *unused;
    tp_status st;

    if (!where) where = &unused;
    *where = NULL;
    if (!out || !blob) return TP_ERR_ARG;
    *out = NULL;
    TP_TRY(tp_allocator_init(&a, alloc));
    r.p = blob;
    r.end = blob + len;
    r.bad = 0;
    if (len < 4 || memcmp(blob, TP_PROGRAM_MAGIC, 4) != 0) {
        *where = "not a toolparse program";
        return TP_ERR_ARG;
    }
    p = (tp_program *)tp_alloc_zeroed(&a, sizeof *p);
    if (!p) return TP_ERR_NOMEM;
    p->alloc = a;
    st = read_header(&r, p);
    if (st == TP_OK) st = read_code(&r, p);
    if (st == TP_OK) st = read_strings(&r, p);
    if (st == TP_OK) st = read_stopsets(&r, p);
    if (st == TP_OK) st = read_entries(&r, p);
    if (st == TP_OK && (r.bad || r.p != r.end)) st = TP_ERR_ARG;
    if (st == TP_OK) st = check_code(p, where);
    if (st != TP_OK) {
        if (st == TP_ERR_ARG && !*where) *where = "malformed program";
        tp_program_free(p);
        return st;
    }
    *out = p;
    return TP_OK;
}

int64_t tp_program_entry(const tp_program *p, const char *name, size_t name_len) {
    uint32_t k;
    for (k = 0; k < p->n_entries; k++) {
        uint32_t n = p->entry_name_off[k + 1] - p->entry_name_off[k];
        if (n == name_len && memcmp(p->names + p->entry_name_off[k], name, n) == 0)
            return (int64_t)p->entry_addr[k];
    }
    return -1;
}

const uint32_t *tp_program_code(const tp_program *p, uint32_t *n_words) {
    if (n_words) *n_words = p->n_code;
    return p->code;
}

const uint8_t *tp_program_string(const tp_program *p, uint32_t index, uint32_t *len) {
    if (index >= p->n_strings) return NULL;
    if (len) *len = p->string_off[index + 1] - p->string_off[index];
    return p->pool + p->string_off[index];
}

const tp_stopset *tp_program_stopset(const tp_program *p, uint32_t index) {
    return index < p->n_stopsets ? &p->stopsets[index] : NULL;
}

uint32_t tp_program_stopset_count(const tp_program *p) { return p->n_stopsets; }

uint32_t tp_program_max_follow(const tp_program *p) { return p->max_follow; }
