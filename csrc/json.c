/* json.c: incremental scanner for one JSON value, resumable at any byte.
 *
 * All state is data in tp_json (a resume state, a one-byte-per-level container stack,
 * the string/escape/hex/UTF-8 sub-states), so a feed can stop at any byte and the next
 * one continues there; there is no C recursion.  Hot loops (plain string bytes,
 * whitespace, digits) run without leaving the current state.  docs/primitives.md is the
 * specification; python/toolparse/reference/json.py is the twin that must agree. */
#include "json.h"

#include <string.h>

#include "alloc.h"

enum state {
    ST_VALUE,          /* a value must come: top level, after ':' or after ',' in a list */
    ST_VALUE_OR_CLOSE, /* after '[' or '(' */
    ST_KEY_OR_CLOSE,   /* after '{' */
    ST_KEY,            /* after ',' in an object */
    ST_COLON,          /* after a key */
    ST_AFTER,          /* after a value inside a container */
    ST_IDENT,          /* lenient unquoted key */
    ST_STR,
    ST_ESC,      /* after a backslash */
    ST_HEX,      /* inside the hex digits of an escape */
    ST_SURR_BSL, /* after a high surrogate escape: a low one may follow */
    ST_SURR_U,   /* after a high surrogate escape and a backslash */
    ST_UTF8,     /* inside a multi-byte UTF-8 character of a string */
    ST_NUM_MINUS,
    ST_NUM_ZERO,
    ST_NUM_INT,
    ST_NUM_DOT,
    ST_NUM_FRAC,
    ST_NUM_E,
    ST_NUM_ESIGN,
    ST_NUM_EXP,
    ST_LIT,
    ST_DONE,
    ST_ERROR
};

enum hex_kind { HEX_U4, HEX_LOW4, HEX_X2, HEX_U8 };

enum container { C_OBJECT = '}', C_ARRAY = ']', C_TUPLE = ')' };

static const char *const literals[] = {"true", "false", "null", "True", "False", "None"};

struct tp_json {
    /* A feed reads and writes the first cache line (the struct is aligned to one): many
     * streams' scanners are fed in one batch step, and each line is a likely miss. */
    tp_json_dialect dialect;
    uint32_t max_depth;
    uint32_t depth;
    uint8_t state;
    uint8_t finished;
    uint8_t str_is_key;
    uint8_t quote;
    uint8_t hex_kind, hex_left;
    uint8_t utf8_left, utf8_lo, utf8_hi;
    uint8_t lit, lit_pos;
    uint32_t code;
    uint32_t relax;
    uint8_t *stack; /* closing byte of each open container: max_depth bytes after the struct */
    uint64_t pos;
    int64_t end;
    tp_json_reason reason;
    tp_json_verdict final_verdict;
    uint64_t err_offset;
    void *allocation; /* what to free: where the aligned storage begins (NULL: placed) */
    uint32_t stack_room; /* the stack's bytes: the deepest max_depth it can take */
    tp_allocator alloc;
};

/* Byte classes for the hot loops. */
#define B_WS 1u
#define B_DIGIT 2u
#define B_HEX 4u
#define B_IDENT_START 8u
#define B_IDENT 16u
#define B_STR_PLAIN 32u /* ASCII, not a control char, no quote or backslash */

static const uint8_t *byte_classes(void) {
    /* Computed tables are avoided to keep the core free of mutable globals. */
    static const uint8_t table[256] = {
#define P B_STR_PLAIN
#define D (B_STR_PLAIN | B_DIGIT | B_HEX | B_IDENT)
#define H (B_STR_PLAIN | B_HEX | B_IDENT_START | B_IDENT)
#define L (B_STR_PLAIN | B_IDENT_START | B_IDENT)
        /* 0x00 */ 0,        0, 0, 0, 0, 0, 0, 0, 0, B_WS, B_WS, 0, 0, B_WS, 0, 0,
        /* 0x10 */ 0,        0, 0, 0, 0, 0, 0, 0, 0, 0,    0,    0, 0, 0,    0, 0,
        /* 0x20 */ P | B_WS, P, 0, P, L, P, P, 0, P, P,    P,    P, P, P,    P, P,
        /* 0x30 */ D,        D, D, D, D, D, D, D, D, D,    P,    P, P, P,    P, P,
        /* 0x40 */ P,        H, H, H, H, H, H, L, L, L,    L,    L, L, L,    L, L,
        /* 0x50 */ L,        L, L, L, L, L, L, L, L, L,    L,    P, 0, P,    P, L,
        /* 0x60 */ P,        H, H, H, H, H, H, L, L, L,    L,    L, L, L,    L, L,
        /* 0x70 */ L,        L, L, L, L, L, L, L, L, L,    L,    P, P, P,    P, P,
#undef P
#undef D
#undef H
#undef L
    };
    return table;
}

static int hex_value(uint8_t b) {
    if (b >= '0' && b <= '9') return b - '0';
    if (b >= 'a' && b <= 'f') return b - 'a' + 10;
    if (b >= 'A' && b <= 'F') return b - 'A' + 10;
    return -1;
}

tp_status tp_json_new(tp_json_dialect dialect, uint32_t max_depth, tp_json **out) {
    return tp_json_new_with(NULL, dialect, max_depth, NULL, out);
}

tp_status tp_json_new_in(tp_json_dialect dialect, uint32_t max_depth, tp_place *place,
                         tp_json **out) {
    return tp_json_new_with(NULL, dialect, max_depth, place, out);
}

tp_status tp_json_new_with(const tp_allocator *alloc, tp_json_dialect dialect, uint32_t max_depth,
                           tp_place *place, tp_json **out) {
    tp_allocator a;
    tp_json *s;
    void *allocation;
    if (!out) return TP_ERR_ARG;
    *out = NULL;
    if (dialect != TP_JSON_STRICT && dialect != TP_JSON_LENIENT && dialect != TP_JSON_PYTHON)
        return TP_ERR_ARG;
    if (max_depth < 1 || max_depth > TP_JSON_MAX_DEPTH_CEILING) return TP_ERR_ARG;
    TP_TRY(tp_allocator_init(&a, alloc));
    s = (tp_json *)tp_place_take(&a, place, sizeof *s + max_depth, &allocation);
    if (!s) return TP_ERR_NOMEM;
    s->allocation = allocation;
    s->alloc = a;
    s->stack = (uint8_t *)(s + 1);
    s->stack_room = max_depth;
    s->dialect = dialect;
    s->max_depth = max_depth;
    tp_json_reset(s);
    *out = s;
    return TP_OK;
}

uint32_t tp_json_depth_room(const tp_json *s) { return s->stack_room; }

tp_status tp_json_set_max_depth(tp_json *s, uint32_t max_depth) {
    if (max_depth < 1 || max_depth > s->stack_room) return TP_ERR_ARG;
    s->max_depth = max_depth;
    return TP_OK;
}

void tp_json_free(tp_json *s) {
    tp_allocator a;
    if (!s) return;
    a = s->alloc;
    tp_free(&a, s->allocation);
}

void tp_json_reset(tp_json *s) {
    s->depth = 0;
    s->state = ST_VALUE;
    s->finished = 0;
    s->str_is_key = 0;
    s->quote = '"';
    s->hex_kind = s->hex_left = 0;
    s->utf8_left = s->utf8_lo = s->utf8_hi = 0;
    s->lit = s->lit_pos = 0;
    s->code = 0;
    s->relax = 0;
    s->pos = 0;
    s->end = -1;
    s->reason = TP_JSON_OK;
    s->err_offset = 0;
    s->final_verdict = TP_JSON_NEED_MORE;
}

static tp_json_verdict verdict_of(const tp_json *s) {
    if (s->state == ST_DONE) return TP_JSON_COMPLETE;
    if (s->state == ST_ERROR) return TP_JSON_ERROR;
    return TP_JSON_NEED_MORE;
}

/* Sets the lead-byte expectations of a multi-byte UTF-8 character; 0 if b is no lead. */
static int utf8_lead(tp_json *s, uint8_t b) {
    if (b >= 0xC2 && b <= 0xDF) {
        s->utf8_left = 1, s->utf8_lo = 0x80, s->utf8_hi = 0xBF;
    } else if (b == 0xE0) {
        s->utf8_left = 2, s->utf8_lo = 0xA0, s->utf8_hi = 0xBF;
    } else if (b == 0xED) {
        s->utf8_left = 2, s->utf8_lo = 0x80, s->utf8_hi = 0x9F;
    } else if (b >= 0xE1 && b <= 0xEF) {
        s->utf8_left = 2, s->utf8_lo = 0x80, s->utf8_hi = 0xBF;
    } else if (b == 0xF0) {
        s->utf8_left = 3, s->utf8_lo = 0x90, s->utf8_hi = 0xBF;
    } else if (b >= 0xF1 && b <= 0xF3) {
        s->utf8_left = 3, s->utf8_lo = 0x80, s->utf8_hi = 0xBF;
    } else if (b == 0xF4) {
        s->utf8_left = 3, s->utf8_lo = 0x80, s->utf8_hi = 0x8F;
    } else {
        return 0;
    }
    return 1;
}

/* The error that every completion of the hex digits so far must end in, or TP_JSON_OK.
 * Checked after each digit, so an escape fails at the first digit that dooms it. */
static tp_json_reason hex_doomed(const tp_json *s) {
    unsigned shift = 4u * s->hex_left;
    uint64_t lo = (uint64_t)s->code << shift;
    uint64_t hi = lo + (((uint64_t)1 << shift) - 1);
    switch (s->hex_kind) {
    case HEX_U8:
        return lo > 0x10FFFF ? TP_JSON_E_INVALID_ESCAPE : TP_JSON_OK;
    case HEX_U4: /* strict: only a lone low surrogate is left */
        if (s->dialect == TP_JSON_STRICT && lo >= 0xDC00 && hi <= 0xDFFF)
            return TP_JSON_E_LONE_SURROGATE;
        return TP_JSON_OK;
    case HEX_LOW4: /* strict: no low surrogate is left to pair with the high one */
        if (s->dialect == TP_JSON_STRICT && (hi < 0xDC00 || lo > 0xDFFF))
            return TP_JSON_E_LONE_SURROGATE;
        return TP_JSON_OK;
    default:
        return TP_JSON_OK;
    }
}

#define FAIL(why)                   \
    do {                            \
        state = ST_ERROR;           \
        s->reason = (why);          \
        s->err_offset = s->pos + i; \
        goto out;                   \
    } while (0)

tp_json_verdict tp_json_feed(tp_json *s, const uint8_t *buf, size_t len, size_t *consumed) {
    const uint8_t *cls = byte_classes();
    const int strict = s->dialect == TP_JSON_STRICT;
    const int python = s->dialect == TP_JSON_PYTHON;
    size_t i = 0;
    uint8_t b, state;

    if (s->finished || s->state == ST_DONE || s->state == ST_ERROR) {
        if (consumed) *consumed = 0;
        return s->finished ? s->final_verdict : verdict_of(s);
    }
    state = s->state; /* kept in a register (the stack writes could alias it) */
    if (state == ST_STR && len <= 16) {
        /* a token inside a string, the most common feed: no byte ends it or needs a look */
        unsigned plain = B_STR_PLAIN;
        for (i = 0; i < len; i++) plain &= cls[buf[i]]; /* no branch per byte */
        if (plain) {
            s->pos += len;
            if (consumed) *consumed = len;
            return TP_JSON_NEED_MORE;
        }
        i = 0;
    }
    while (i < len) {
        b = buf[i];
    again:
        switch (state) {
        case ST_VALUE:
        case ST_VALUE_OR_CLOSE:
        case ST_KEY_OR_CLOSE:
        case ST_KEY:
        case ST_COLON:
        case ST_AFTER:
            while (cls[b] & B_WS) {
                if (++i == len) goto out;
                b = buf[i];
            }
            break;
        default:
            break;
        }
        switch (state) {
        case ST_VALUE_OR_CLOSE:
            if (b == s->stack[s->depth - 1]) goto close_container;
            goto value;
        case ST_VALUE:
            if (s->depth > 0 && s->stack[s->depth - 1] != C_OBJECT && (b == ']' || b == ')')) {
                if (b != s->stack[s->depth - 1]) FAIL(TP_JSON_E_UNEXPECTED_BYTE);
                if (strict) FAIL(TP_JSON_E_TRAILING_COMMA);
                if (!python) s->relax |= TP_JSON_R_TRAILING_COMMA;
                goto close_container;
            }
        value:
            switch (b) {
            case '{':
            case '[':
                if (s->depth == s->max_depth) FAIL(TP_JSON_E_LIMIT);
                s->stack[s->depth++] = (uint8_t)(b == '{' ? C_OBJECT : C_ARRAY);
                state = b == '{' ? ST_KEY_OR_CLOSE : ST_VALUE_OR_CLOSE;
                i++;
                continue;
            case '(':
                if (!python) FAIL(TP_JSON_E_UNEXPECTED_BYTE);
                if (s->depth == s->max_depth) FAIL(TP_JSON_E_LIMIT);
                s->stack[s->depth++] = C_TUPLE;
                state = ST_VALUE_OR_CLOSE;
                i++;
                continue;
            case '"':
            case '\'':
                goto open_string;
            case '+': /* Python takes a unary plus (literal_eval("+7") is 7) */
                if (!python) FAIL(TP_JSON_E_UNEXPECTED_BYTE);
                /* fall through */
            case '-':
                state = ST_NUM_MINUS;
                i++;
                continue;
            case '0':
                state = ST_NUM_ZERO;
                i++;
                continue;
            case 't':
            case 'f':
            case 'n': /* also in python: models writing Python calls use JSON's literals */
                s->lit = (uint8_t)(b == 't' ? 0 : b == 'f' ? 1 : 2);
                goto open_literal;
            case 'T':
            case 'F':
            case 'N':
                if (strict) FAIL(TP_JSON_E_UNEXPECTED_BYTE);
                if (!python) s->relax |= TP_JSON_R_PYTHON_LITERAL;
                s->lit = (uint8_t)(b == 'T' ? 3 : b == 'F' ? 4 : 5);
                goto open_literal;
            default:
                if (b >= '1' && b <= '9') {
                    state = ST_NUM_INT;
                    i++;
                    continue;
                }
                FAIL(TP_JSON_E_UNEXPECTED_BYTE);
            }
        open_literal:
            s->lit_pos = 1;
            state = ST_LIT;
            i++;
            continue;

        case ST_KEY_OR_CLOSE:
            if (b == '}') goto close_container;
            goto key;
        case ST_KEY:
            if (b == '}') {
                if (strict) FAIL(TP_JSON_E_TRAILING_COMMA);
                if (!python) s->relax |= TP_JSON_R_TRAILING_COMMA;
                goto close_container;
            }
        key:
            if (b == '"' || b == '\'') {
                s->str_is_key = 1;
                goto open_string_quote;
            }
            if (s->dialect == TP_JSON_LENIENT && (cls[b] & B_IDENT_START)) {
                s->relax |= TP_JSON_R_UNQUOTED_KEY;
                state = ST_IDENT;
                i++;
                continue;
            }
            FAIL(TP_JSON_E_UNEXPECTED_BYTE);

        case ST_IDENT:
            while (cls[b] & B_IDENT) {
                if (++i == len) goto out;
                b = buf[i];
            }
            if (b == ':') {
                state = ST_VALUE;
                i++;
                continue;
            }
            if (cls[b] & B_WS) {
                state = ST_COLON;
                continue;
            }
            FAIL(TP_JSON_E_UNEXPECTED_BYTE);

        case ST_COLON:
            if (b != ':') FAIL(TP_JSON_E_UNEXPECTED_BYTE);
            state = ST_VALUE;
            i++;
            continue;

        case ST_AFTER:
            if (b == ',') {
                state = s->stack[s->depth - 1] == C_OBJECT ? ST_KEY : ST_VALUE;
                i++;
                continue;
            }
            if (b == s->stack[s->depth - 1]) goto close_container;
            if (s->dialect == TP_JSON_LENIENT) {
                /* a comma left out: the next member's key, or an array's next string,
                 * object or array (a number or a literal after one is no clear start) */
                if (s->stack[s->depth - 1] == C_OBJECT) {
                    if (b == '"' || b == '\'' || (cls[b] & B_IDENT_START)) {
                        s->relax |= TP_JSON_R_MISSING_COMMA;
                        goto key;
                    }
                } else if (b == '"' || b == '\'' || b == '{' || b == '[') {
                    s->relax |= TP_JSON_R_MISSING_COMMA;
                    goto value;
                }
            }
            FAIL(TP_JSON_E_UNEXPECTED_BYTE);

        case ST_STR:
            while (cls[b] & B_STR_PLAIN) {
                if (++i == len) goto out;
                b = buf[i];
            }
            if (b == s->quote) {
                i++;
                if (s->str_is_key) {
                    state = ST_COLON;
                    continue;
                }
                goto value_done;
            }
            if (b == '\\') {
                state = ST_ESC;
                i++;
                continue;
            }
            if (b >= 0x80) {
                if (!utf8_lead(s, b)) FAIL(TP_JSON_E_INVALID_UTF8);
                state = ST_UTF8;
                i++;
                continue;
            }
            if (b < 0x20) {
                if (strict) FAIL(TP_JSON_E_CONTROL_CHARACTER);
                if (python) {
                    if (b == '\n' || b == '\r') FAIL(TP_JSON_E_CONTROL_CHARACTER);
                } else {
                    s->relax |= TP_JSON_R_CONTROL_CHARACTER;
                }
            }
            i++; /* the other quote character, or an accepted control character */
            continue;

        case ST_UTF8:
            if (b < s->utf8_lo || b > s->utf8_hi) FAIL(TP_JSON_E_INVALID_UTF8);
            s->utf8_lo = 0x80, s->utf8_hi = 0xBF;
            if (--s->utf8_left == 0) state = ST_STR;
            i++;
            continue;

        case ST_ESC:
            if (python) {
                if (b == 'x' || b == 'u' || b == 'U') {
                    s->hex_kind = b == 'x' ? HEX_X2 : b == 'u' ? HEX_U4 : HEX_U8;
                    goto open_hex;
                }
                if (b >= 0x80) {
                    if (!utf8_lead(s, b)) FAIL(TP_JSON_E_INVALID_UTF8);
                    state = ST_UTF8;
                    i++;
                    continue;
                }
                state = ST_STR;
                i++;
                continue;
            }
            switch (b) {
            case 'u':
                s->hex_kind = HEX_U4;
                goto open_hex;
            case '\'':
                if (strict) FAIL(TP_JSON_E_INVALID_ESCAPE);
                s->relax |= TP_JSON_R_SINGLE_QUOTE;
                /* fall through */
            case '"':
            case '\\':
            case '/':
            case 'b':
            case 'f':
            case 'n':
            case 'r':
            case 't':
                state = ST_STR;
                i++;
                continue;
            default:
                FAIL(TP_JSON_E_INVALID_ESCAPE);
            }
        open_hex:
            s->hex_left = (uint8_t)(s->hex_kind == HEX_X2 ? 2 : s->hex_kind == HEX_U8 ? 8 : 4);
            s->code = 0;
            state = ST_HEX;
            i++;
            continue;

        case ST_HEX: {
            int h = hex_value(b);
            tp_json_reason doomed;
            if (h < 0) FAIL(TP_JSON_E_INVALID_ESCAPE);
            s->code = (s->code << 4) | (uint32_t)h;
            s->hex_left--;
            doomed = hex_doomed(s);
            if (doomed != TP_JSON_OK) FAIL(doomed);
            if (s->hex_left > 0) {
                i++;
                continue;
            }
            if (s->hex_kind == HEX_X2) {
                state = ST_STR;
            } else if (s->hex_kind == HEX_U8) {
                if (s->code >= 0xD800 && s->code <= 0xDFFF) s->relax |= TP_JSON_R_LONE_SURROGATE;
                state = ST_STR;
            } else if (s->hex_kind == HEX_LOW4 && s->code >= 0xDC00 && s->code <= 0xDFFF) {
                state = ST_STR; /* a complete surrogate pair */
            } else {
                /* lenient or python: the pending high surrogate, or this low one, is alone */
                if (s->hex_kind == HEX_LOW4 || (s->code >= 0xDC00 && s->code <= 0xDFFF))
                    s->relax |= TP_JSON_R_LONE_SURROGATE;
                state = s->code >= 0xD800 && s->code <= 0xDBFF ? ST_SURR_BSL : ST_STR;
            }
            i++;
            continue;
        }

        case ST_SURR_BSL:
            if (b == '\\') {
                state = ST_SURR_U;
                i++;
                continue;
            }
            if (strict) FAIL(TP_JSON_E_LONE_SURROGATE);
            s->relax |= TP_JSON_R_LONE_SURROGATE;
            state = ST_STR;
            goto again;

        case ST_SURR_U:
            if (b == 'u') {
                s->hex_kind = HEX_LOW4;
                goto open_hex;
            }
            if (strict) FAIL(TP_JSON_E_LONE_SURROGATE);
            s->relax |= TP_JSON_R_LONE_SURROGATE;
            state = ST_ESC;
            goto again;

        case ST_NUM_MINUS:
            if (b == '0') {
                state = ST_NUM_ZERO;
            } else if (b >= '1' && b <= '9') {
                state = ST_NUM_INT;
            } else {
                FAIL(TP_JSON_E_INVALID_NUMBER);
            }
            i++;
            continue;
        case ST_NUM_ZERO:
            if (cls[b] & B_DIGIT) FAIL(TP_JSON_E_LEADING_ZERO);
            goto number_tail;
        case ST_NUM_INT:
            while (cls[b] & B_DIGIT) {
                if (++i == len) goto out;
                b = buf[i];
            }
        number_tail:
            if (b == '.') {
                state = ST_NUM_DOT;
                i++;
                continue;
            }
            if (b == 'e' || b == 'E') {
                state = ST_NUM_E;
                i++;
                continue;
            }
            goto number_done;
        case ST_NUM_DOT:
            if (!(cls[b] & B_DIGIT)) FAIL(TP_JSON_E_INVALID_NUMBER);
            state = ST_NUM_FRAC;
            i++;
            continue;
        case ST_NUM_FRAC:
            while (cls[b] & B_DIGIT) {
                if (++i == len) goto out;
                b = buf[i];
            }
            if (b == 'e' || b == 'E') {
                state = ST_NUM_E;
                i++;
                continue;
            }
            goto number_done;
        case ST_NUM_E:
            if (b == '+' || b == '-') {
                state = ST_NUM_ESIGN;
                i++;
                continue;
            }
            /* fall through */
        case ST_NUM_ESIGN:
            if (!(cls[b] & B_DIGIT)) FAIL(TP_JSON_E_INVALID_NUMBER);
            state = ST_NUM_EXP;
            i++;
            continue;
        case ST_NUM_EXP:
            while (cls[b] & B_DIGIT) {
                if (++i == len) goto out;
                b = buf[i];
            }
            goto number_done;

        case ST_LIT: {
            const char *lit = literals[s->lit];
            if (b != (uint8_t)lit[s->lit_pos]) FAIL(TP_JSON_E_INVALID_LITERAL);
            i++;
            if (lit[++s->lit_pos] != '\0') continue;
            goto value_done;
        }

        default: /* ST_DONE and ST_ERROR never reach the loop */
            goto out;
        }

    open_string:
        s->str_is_key = 0;
    open_string_quote:
        if (b == '\'') {
            if (strict) FAIL(TP_JSON_E_UNEXPECTED_BYTE);
            if (!python) s->relax |= TP_JSON_R_SINGLE_QUOTE;
        }
        s->quote = b;
        state = ST_STR;
        i++;
        continue;

    close_container:
        s->depth--;
        i++;
    value_done:
        /* i is already past the value's last byte */
        if (s->depth == 0) {
            state = ST_DONE;
            s->end = (int64_t)(s->pos + i);
            goto out;
        }
        state = ST_AFTER;
        continue;

    number_done:
        /* the number ends before b, which is not consumed here */
        if (s->depth == 0) {
            state = ST_DONE;
            s->end = (int64_t)(s->pos + i);
            goto out;
        }
        state = ST_AFTER;
        goto again;
    }
out:
    s->state = state;
    s->pos += i; /* on error, i stops at the offending byte */
    if (consumed) *consumed = i;
    return verdict_of(s);
}
#undef FAIL

tp_json_verdict tp_json_finish(tp_json *s) {
    if (s->finished) return s->final_verdict;
    switch (s->state) {
    case ST_NUM_ZERO:
    case ST_NUM_INT:
    case ST_NUM_FRAC:
    case ST_NUM_EXP:
        /* a top-level number ends with the input */
        if (s->depth == 0) {
            s->state = ST_DONE;
            s->end = (int64_t)s->pos;
        }
        break;
    default:
        break;
    }
    s->finished = 1;
    s->final_verdict = s->state == ST_DONE    ? TP_JSON_COMPLETE
                       : s->state == ST_ERROR ? TP_JSON_ERROR
                                              : TP_JSON_INCOMPLETE;
    return s->final_verdict;
}

tp_json_verdict tp_json_verdict_of(const tp_json *s) {
    return s->finished ? s->final_verdict : verdict_of(s);
}

int tp_json_finished(const tp_json *s) { return s->finished; }

uint64_t tp_json_position(const tp_json *s) { return s->pos; }

int64_t tp_json_end(const tp_json *s) { return s->end; }

uint32_t tp_json_depth(const tp_json *s) { return s->depth; }

uint32_t tp_json_relaxations(const tp_json *s) { return s->relax; }

tp_json_reason tp_json_error(const tp_json *s, uint64_t *offset) {
    if (offset) *offset = s->err_offset;
    return s->reason;
}

const char *tp_json_reason_name(tp_json_reason reason) {
    switch (reason) {
    case TP_JSON_OK:
        return "ok";
    case TP_JSON_E_LIMIT:
        return "limit";
    case TP_JSON_E_UNEXPECTED_BYTE:
        return "unexpected_byte";
    case TP_JSON_E_TRAILING_COMMA:
        return "trailing_comma";
    case TP_JSON_E_INVALID_LITERAL:
        return "invalid_literal";
    case TP_JSON_E_INVALID_NUMBER:
        return "invalid_number";
    case TP_JSON_E_LEADING_ZERO:
        return "leading_zero";
    case TP_JSON_E_INVALID_ESCAPE:
        return "invalid_escape";
    case TP_JSON_E_LONE_SURROGATE:
        return "lone_surrogate";
    case TP_JSON_E_CONTROL_CHARACTER:
        return "control_character";
    case TP_JSON_E_INVALID_UTF8:
        return "invalid_utf8";
    }
    return "unknown";
}

const char *tp_json_relaxation_name(unsigned bit_index) {
    static const char *const names[TP_JSON_RELAXATION_COUNT] = {
        "trailing_comma",    "single_quote",   "unquoted_key", "python_literal",
        "control_character", "lone_surrogate", "missing_comma"};
    return bit_index < TP_JSON_RELAXATION_COUNT ? names[bit_index] : NULL;
}

/* Longest lexical completion: a \U escape (7 digits), a quote and ":0". */
#define LEXICAL_MAX 16

/* Completes the token in progress and what the innermost container still needs before
 * its closing byte.  Returns the length written to out, or -1 when no completion exists. */
static int lexical_closing(const tp_json *s, char *out) {
    const int strict = s->dialect == TP_JSON_STRICT;
    int n = 0, k;
    uint8_t top = s->depth > 0 ? s->stack[s->depth - 1] : 0;
    switch (s->state) {
    case ST_DONE:
    case ST_VALUE_OR_CLOSE:
    case ST_KEY_OR_CLOSE:
    case ST_AFTER:
    case ST_NUM_ZERO:
    case ST_NUM_INT:
    case ST_NUM_FRAC:
    case ST_NUM_EXP:
        return 0;
    case ST_ERROR:
        return -1;
    case ST_VALUE:
        if (top == C_ARRAY || top == C_TUPLE) {
            if (!strict) return 0; /* the trailing comma is allowed */
        }
        out[0] = '0';
        return 1;
    case ST_NUM_MINUS:
    case ST_NUM_DOT:
    case ST_NUM_E:
    case ST_NUM_ESIGN:
        out[0] = '0';
        return 1;
    case ST_KEY:
        if (!strict) return 0;
        memcpy(out, "\"\":0", 4);
        return 4;
    case ST_IDENT:
    case ST_COLON:
        memcpy(out, ":0", 2);
        return 2;
    case ST_LIT: {
        const char *rest = literals[s->lit] + s->lit_pos;
        n = (int)strlen(rest);
        memcpy(out, rest, (size_t)n);
        return n;
    }
    case ST_STR:
        break;
    case ST_ESC:
        out[n++] = '\\';
        break;
    case ST_UTF8:
        out[n++] = (char)s->utf8_lo;
        for (k = 1; k < s->utf8_left; k++) out[n++] = (char)0x80;
        break;
    case ST_SURR_BSL:
        if (strict) {
            memcpy(out, "\\udc00", 6);
            n = 6;
        }
        break;
    case ST_SURR_U:
        if (strict) {
            memcpy(out, "udc00", 5);
            n = 5;
        } else {
            out[n++] = '\\';
        }
        break;
    case ST_HEX: {
        /* hex_doomed() let these digits through, so a valid completion exists: the
         * smallest one (zeros), raised to DC00 for the low half of a pair. */
        uint64_t code = (uint64_t)s->code << (4 * s->hex_left);
        if (s->hex_kind == HEX_LOW4 && strict && code < 0xDC00) code = 0xDC00;
        for (k = s->hex_left - 1; k >= 0; k--) {
            out[n++] = "0123456789abcdef"[(code >> (4 * k)) & 15];
        }
        if (s->hex_kind == HEX_U4 && strict && code >= 0xD800 && code <= 0xDBFF) {
            memcpy(out + n, "\\udc00", 6);
            n += 6;
        }
        break;
    }
    default:
        return -1;
    }
    /* inside a string: close it, and a key still needs its value */
    out[n++] = (char)s->quote;
    if (s->str_is_key) {
        out[n++] = ':';
        out[n++] = '0';
    }
    return n;
}

tp_status tp_json_closing(const tp_json *s, char *buf, size_t cap, size_t *len) {
    char lex[LEXICAL_MAX];
    int n = lexical_closing(s, lex);
    size_t need, k;
    if (n < 0) {
        if (len) *len = 0;
        return TP_ERR_STATE;
    }
    need = (size_t)n + (s->state == ST_DONE ? 0 : s->depth);
    if (len) *len = need;
    if (need == 0) return TP_OK;
    if (cap < need || !buf) return TP_ERR_NOSPACE;
    memcpy(buf, lex, (size_t)n);
    if (s->state != ST_DONE) {
        for (k = 0; k < s->depth; k++) buf[(size_t)n + k] = (char)s->stack[s->depth - 1 - k];
    }
    return TP_OK;
}
