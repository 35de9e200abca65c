/* gemmavalue.c: Gemma 4 (and FunctionGemma) value to JSON text; the twin of
 * python/toolparse/reference/gemmavalue.py. */
#include "gemmavalue.h"

#include "text.h"

typedef struct quote_text {
    const uint8_t *text;
    size_t len;
} quote_text;

static int quote_at(const quote_text *q, const uint8_t *s, size_t n, size_t k) {
    return n - k >= q->len && memcmp(s + k, q->text, q->len) == 0;
}

/* text as a JSON string */
static tp_status json_string(tp_buf *out, const uint8_t *text, size_t len) {
    TP_TRY(tp_buf_append(out, "\"", 1));
    TP_TRY(tp_json_escape_append(out, text, len));
    return tp_buf_append(out, "\"", 1);
}

static tp_status convert(tp_buf *out, tp_buf *open, const quote_text *q, const uint8_t *s,
                         size_t n) {
    size_t k = 0;
    int want_key = 0;
    while (k < n) {
        uint8_t b = s[k];
        if (tp_is_space(b)) {
            k++;
        } else if (want_key && b != '}') { /* a dict key: quoted, or the text before its colon */
            size_t start = k, end;
            if (quote_at(q, s, n, k)) {
                start = k = k + q->len;
                while (k < n && !quote_at(q, s, n, k)) k++;
                end = k;
                k = k < n ? k + q->len : n;
                while (k < n && s[k] != ':') k++;
            } else {
                while (k < n && s[k] != ':') k++;
                end = k;
                while (end > start && tp_is_space(s[end - 1])) end--;
            }
            TP_TRY(json_string(out, s + start, end - start));
            TP_TRY(tp_buf_append(out, ": ", 2));
            if (k < n) k++;
            want_key = 0;
        } else if (quote_at(q, s, n, k)) {
            size_t start = k + q->len;
            k = start;
            while (k < n && !quote_at(q, s, n, k)) k++;
            TP_TRY(json_string(out, s + start, k - start));
            k = k < n ? k + q->len : n;
        } else if (b == '{' || b == '[') {
            TP_TRY(tp_buf_append(open, &b, 1));
            TP_TRY(tp_buf_append(out, &b, 1));
            want_key = b == '{';
            k++;
        } else if (b == '}' || b == ']') {
            if (open->len) open->len--;
            TP_TRY(tp_buf_append(out, &b, 1));
            want_key = 0;
            k++;
        } else if (b == ',') {
            TP_TRY(tp_buf_append(out, ", ", 2));
            want_key = open->len && open->data[open->len - 1] == '{';
            k++;
        } else {
            TP_TRY(tp_buf_append(out, &b, 1));
            k++;
        }
    }
    return TP_OK;
}

tp_status tp_gemma_value_to_json(tp_buf *out, const uint8_t *s, size_t n, const char *quote) {
    tp_buf open = TP_BUF_INIT(out->alloc); /* the containers open at this point, innermost last */
    quote_text q;
    tp_status st;
    q.text = (const uint8_t *)quote;
    q.len = strlen(quote);
    st = convert(out, &open, &q, s, n);
    tp_buf_free(&open);
    return st;
}
