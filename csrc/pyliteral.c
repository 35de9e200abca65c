/* pyliteral.c: Python literal to JSON text; the twin of
 * python/toolparse/reference/pyliteral.py. */
#include "pyliteral.h"

#include "text.h"

#define REPLACEMENT 0xFFFDu

/* The value of up to `digits` hex digits at s[*k], advancing *k past them. */
static uint32_t hex_run(const uint8_t *s, size_t n, size_t *k, size_t digits) {
    uint32_t value = 0;
    size_t d;
    for (d = 0; d < digits && *k < n; d++, (*k)++) value = value << 4 | (uint32_t)tp_hexval(s[*k]);
    return value;
}

/* Decodes the escape after the backslash at s[*k - 1] into text, advancing *k. */
static tp_status escape(tp_buf *text, const uint8_t *s, size_t n, size_t *k) {
    uint8_t b = s[*k];
    uint32_t cp;
    switch (b) {
    case '\\':
    case '\'':
    case '"':
        cp = b;
        break;
    case 'a':
        cp = 0x07;
        break;
    case 'b':
        cp = 0x08;
        break;
    case 'f':
        cp = 0x0C;
        break;
    case 'n':
        cp = 0x0A;
        break;
    case 'r':
        cp = 0x0D;
        break;
    case 't':
        cp = 0x09;
        break;
    case 'v':
        cp = 0x0B;
        break;
    case '\n':
    case '\r': /* a line continuation stands for nothing */
        (*k)++;
        return TP_OK;
    case 'x':
    case 'u':
    case 'U':
        (*k)++;
        cp = hex_run(s, n, k, b == 'x' ? 2 : b == 'u' ? 4 : 8);
        if (b == 'u' && cp >= 0xD800 && cp <= 0xDBFF && *k + 6 <= n && s[*k] == '\\' &&
            s[*k + 1] == 'u') {
            size_t at = *k + 2;
            uint32_t low = hex_run(s, n, &at, 4);
            if (low >= 0xDC00 && low <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                *k = at;
            }
        }
        if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) cp = REPLACEMENT;
        return tp_utf8_append(text, cp);
    default:
        if (b >= '0' && b <= '7') {
            size_t d;
            cp = 0;
            for (d = 0; d < 3 && *k < n && s[*k] >= '0' && s[*k] <= '7'; d++, (*k)++)
                cp = cp << 3 | (uint32_t)(s[*k] - '0');
            return tp_utf8_append(text, cp);
        }
        /* Python keeps the backslash of an escape it does not know */
        return tp_buf_append(text, "\\", 1);
    }
    (*k)++;
    return tp_utf8_append(text, cp);
}

/* The string whose opening quote is s[*k], as a JSON string; *k ends past its quote. */
static tp_status string(tp_buf *out, tp_buf *text, const uint8_t *s, size_t n, size_t *k) {
    uint8_t quote = s[(*k)++];
    text->len = 0;
    while (*k < n && s[*k] != quote) {
        size_t run = *k;
        while (*k < n && s[*k] != quote && s[*k] != '\\') (*k)++;
        TP_TRY(tp_buf_append(text, s + run, *k - run));
        if (*k < n && s[*k] == '\\') {
            (*k)++;
            if (*k < n) TP_TRY(escape(text, s, n, k));
        }
    }
    if (*k < n) (*k)++;
    TP_TRY(tp_buf_append(out, "\"", 1));
    TP_TRY(tp_json_escape_append(out, text->data, text->len));
    return tp_buf_append(out, "\"", 1);
}

static tp_status convert(tp_buf *out, tp_buf *text, const uint8_t *s, size_t n) {
    size_t k = 0;
    while (k < n) {
        uint8_t b = s[k];
        if (tp_is_space(b)) {
            k++;
        } else if (b == '"' || b == '\'') {
            TP_TRY(string(out, text, s, n, &k));
        } else if (b == ',') {
            size_t next = k + 1;
            while (next < n && tp_is_space(s[next])) next++;
            k++;
            if (next < n && (s[next] == ']' || s[next] == '}' || s[next] == ')')) continue;
            TP_TRY(tp_buf_append(out, ", ", 2));
        } else if (b == ':') {
            k++;
            TP_TRY(tp_buf_append(out, ": ", 2));
        } else if (b == '(' || b == ')') {
            k++;
            TP_TRY(tp_buf_append(out, b == '(' ? "[" : "]", 1));
        } else if (b == '+' && (k == 0 || (s[k - 1] != 'e' && s[k - 1] != 'E'))) {
            k++; /* a number's unary plus: JSON writes none (an exponent's stays) */
        } else if (b == 'T' || b == 'F' || b == 'N') {
            size_t len = b == 'F' ? 5 : 4;
            k += len;
            TP_TRY(tp_buf_append(out, b == 'T' ? "true" : b == 'F' ? "false" : "null", len));
        } else {
            k++;
            TP_TRY(tp_buf_append(out, &b, 1));
        }
    }
    return TP_OK;
}

tp_status tp_python_literal_to_json(tp_buf *out, const uint8_t *s, size_t n) {
    tp_buf text = TP_BUF_INIT(out->alloc); /* one string's decoded characters */
    tp_status st = convert(out, &text, s, n);
    tp_buf_free(&text);
    return st;
}
