/* text.c: UTF-8 and JSON string text, shared by the event builder and the Python
 * literal converter. */
#include "text.h"

static int valid_prefix(const uint8_t *seq, size_t n) {
    uint8_t lead = seq[0], lo = 0x80, hi = 0xBF;
    size_t k;
    if (lead < 0xC2 || lead > 0xF4) return 0;
    if (n > 1) {
        if (lead == 0xE0)
            lo = 0xA0;
        else if (lead == 0xED)
            hi = 0x9F;
        else if (lead == 0xF0)
            lo = 0x90;
        else if (lead == 0xF4)
            hi = 0x8F;
        if (seq[1] < lo || seq[1] > hi) return 0;
    }
    for (k = 2; k < n; k++) {
        if (seq[k] < 0x80 || seq[k] > 0xBF) return 0;
    }
    return 1;
}

/* How many trailing bytes of data form an incomplete UTF-8 sequence more bytes could
 * still complete (0 to 3). */
size_t tp_utf8_tail(const uint8_t *data, size_t n) {
    size_t back;
    for (back = 1; back <= 4 && back <= n; back++) {
        uint8_t lead = data[n - back];
        size_t need;
        if (lead < 0x80) return 0;
        if (lead >= 0xC0) {
            need = lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
            return back < need && valid_prefix(data + n - back, back) ? back : 0;
        }
    }
    return 0;
}

/* Length of the valid UTF-8 character at s (1 to 4), or 0 with *bad set to the length
 * of the ill-formed part that one U+FFFD replaces (CPython's "replace": the maximal
 * subpart of a valid sequence, at least one byte). */
size_t tp_utf8_char(const uint8_t *s, size_t n, size_t *bad) {
    uint8_t lead = s[0], lo = 0x80, hi = 0xBF;
    size_t need, k;
    if (lead < 0x80) return 1;
    if (lead < 0xC2 || lead > 0xF4) {
        *bad = 1;
        return 0;
    }
    need = lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    if (lead == 0xE0)
        lo = 0xA0;
    else if (lead == 0xED)
        hi = 0x9F;
    else if (lead == 0xF0)
        lo = 0x90;
    else if (lead == 0xF4)
        hi = 0x8F;
    for (k = 1; k < need; k++) {
        if (k >= n || s[k] < lo || s[k] > hi) {
            *bad = k;
            return 0;
        }
        lo = 0x80, hi = 0xBF;
    }
    return need;
}

/* At s[*k], a byte past ASCII: passes over a valid character, or writes s[*run, *k) and
 * U+FFFD for the ill-formed part there (what decoding with "replace" gives) and passes
 * over that. */
static tp_status pass_non_ascii(tp_buf *out, const uint8_t *s, size_t n, size_t *k, size_t *run) {
    size_t bad = 0, len = tp_utf8_char(s + *k, n - *k, &bad);
    if (len) {
        *k += len;
        return TP_OK;
    }
    TP_TRY(tp_buf_append(out, s + *run, *k - *run));
    TP_TRY(tp_buf_append(out, "\xef\xbf\xbd", 3));
    *k += bad;
    *run = *k;
    return TP_OK;
}

/* Appends text as the inside of a JSON string, escaped as json.dumps does, with each
 * ill-formed UTF-8 part replaced by U+FFFD (as decoding with "replace" would). */
tp_status tp_json_escape_append(tp_buf *out, const uint8_t *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    size_t k = 0, run = 0;
    if (n == 0) return TP_OK; /* s may be NULL then: no offset from it */
    while (k < n) {
        uint8_t b = s[k];
        char esc[6];
        size_t esc_len = 2;
        if (b >= 0x80) {
            TP_TRY(pass_non_ascii(out, s, n, &k, &run));
            continue;
        }
        if (b >= 0x20 && b != '"' && b != '\\') {
            k++;
            continue;
        }
        TP_TRY(tp_buf_append(out, s + run, k - run));
        k++;
        run = k;
        esc[0] = '\\';
        switch (b) {
        case '"':
            esc[1] = '"';
            break;
        case '\\':
            esc[1] = '\\';
            break;
        case '\n':
            esc[1] = 'n';
            break;
        case '\r':
            esc[1] = 'r';
            break;
        case '\t':
            esc[1] = 't';
            break;
        case '\b':
            esc[1] = 'b';
            break;
        case '\f':
            esc[1] = 'f';
            break;
        default:
            esc[1] = 'u', esc[2] = '0', esc[3] = '0';
            esc[4] = hex[b >> 4], esc[5] = hex[b & 15];
            esc_len = 6;
        }
        TP_TRY(tp_buf_append(out, esc, esc_len));
    }
    return tp_buf_append(out, s + run, n - run);
}

tp_status tp_utf8_replace_append(tp_buf *out, const uint8_t *s, size_t n) {
    size_t k = 0, run = 0;
    while (k < n) {
        if (s[k] < 0x80)
            k++;
        else
            TP_TRY(pass_non_ascii(out, s, n, &k, &run));
    }
    return tp_buf_append(out, s + run, n - run);
}

int tp_hexval(uint8_t b) {
    if (b >= '0' && b <= '9') return b - '0';
    if (b >= 'a' && b <= 'f') return b - 'a' + 10;
    if (b >= 'A' && b <= 'F') return b - 'A' + 10;
    return 0;
}

tp_status tp_utf8_append(tp_buf *out, uint32_t cp) {
    uint8_t u[4];
    size_t n;
    if (cp < 0x80)
        u[0] = (uint8_t)cp, n = 1;
    else if (cp < 0x800)
        u[0] = (uint8_t)(0xC0 | cp >> 6), u[1] = (uint8_t)(0x80 | (cp & 63)), n = 2;
    else if (cp < 0x10000) {
        u[0] = (uint8_t)(0xE0 | cp >> 12), u[1] = (uint8_t)(0x80 | (cp >> 6 & 63));
        u[2] = (uint8_t)(0x80 | (cp & 63)), n = 3;
    } else {
        u[0] = (uint8_t)(0xF0 | cp >> 18), u[1] = (uint8_t)(0x80 | (cp >> 12 & 63));
        u[2] = (uint8_t)(0x80 | (cp >> 6 & 63)), u[3] = (uint8_t)(0x80 | (cp & 63)), n = 4;
    }
    return tp_buf_append(out, u, n);
}

/* Decodes a strict JSON string token (already validated by the scanner) into out. */
tp_status tp_json_string_decode(tp_buf *out, const uint8_t *s, size_t n) {
    size_t k = 0;
    while (k < n && s[k] != '"') k++; /* leading whitespace */
    k++;
    while (k < n && s[k] != '"') {
        uint32_t cp;
        if (s[k] != '\\') {
            size_t run = k;
            while (k < n && s[k] != '"' && s[k] != '\\') k++;
            TP_TRY(tp_buf_append(out, s + run, k - run));
            continue;
        }
        if (k + 1 >= n) break;
        switch (s[k + 1]) {
        case 'b':
            cp = '\b';
            break;
        case 'f':
            cp = '\f';
            break;
        case 'n':
            cp = '\n';
            break;
        case 'r':
            cp = '\r';
            break;
        case 't':
            cp = '\t';
            break;
        case 'u':
            if (k + 6 > n) return TP_OK;
            cp = (uint32_t)(tp_hexval(s[k + 2]) << 12 | tp_hexval(s[k + 3]) << 8 |
                            tp_hexval(s[k + 4]) << 4 | tp_hexval(s[k + 5]));
            k += 6;
            if (cp >= 0xD800 && cp <= 0xDBFF && k + 6 <= n && s[k] == '\\' && s[k + 1] == 'u') {
                uint32_t lo = (uint32_t)(tp_hexval(s[k + 2]) << 12 | tp_hexval(s[k + 3]) << 8 |
                                         tp_hexval(s[k + 4]) << 4 | tp_hexval(s[k + 5]));
                if (lo >= 0xDC00 && lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    k += 6;
                }
            }
            TP_TRY(tp_utf8_append(out, cp));
            continue;
        default:
            cp = s[k + 1];
            break; /* " \ / */
        }
        TP_TRY(tp_utf8_append(out, cp));
        k += 2;
    }
    return TP_OK;
}
