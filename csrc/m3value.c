/* m3value.c: a MiniMax-M3 tag-tree value to JSON text; the twin of
 * python/toolparse/reference/m3value.py. */
#include "m3value.h"

#include "event.h"
#include "reader.h"
#include "text.h"

static const uint8_t NS[] = "]<]minimax[>[";
#define NS_LEN 13u

static const uint32_t string_only[1] = {TP_TYPE_STRING};

/* -- text -------------------------------------------------------------------------------- */

static tp_status quoted(tp_buf *out, const uint8_t *s, size_t n) {
    TP_TRY(tp_buf_append(out, "\"", 1));
    TP_TRY(tp_json_escape_append(out, s, n));
    return tp_buf_append(out, "\"", 1);
}

/* Whether a valid JSON number's value is a whole number (JSON Schema's integer: 5.0 and
 * 250e-1 are, 2.5 is not): the digits' trailing zeros cover the places the point moves
 * left. */
static int integral(const uint8_t *s, size_t n) {
    size_t k = 0, fraction = 0, zeros = 0, digits = 0;
    uint64_t exponent = 0;
    int negative = 0, seen_point = 0;
    if (s[k] == '-') k++;
    for (; k < n && s[k] != 'e' && s[k] != 'E'; k++) {
        if (s[k] == '.') {
            seen_point = 1;
            continue;
        }
        fraction += (size_t)seen_point;
        if (s[k] != '0' || digits) digits++;
        zeros = s[k] == '0' ? zeros + 1 : 0;
    }
    if (digits == 0) return 1; /* zero */
    if (k < n) {
        k++;
        if (s[k] == '-' || s[k] == '+') negative = s[k++] == '-';
        for (; k < n; k++)
            if (exponent < UINT32_MAX) exponent = exponent * 10 + (uint64_t)(s[k] - '0');
    }
    /* the value is digits x 10^(exponent - fraction): whole when that power is not
     * negative or the trailing zeros absorb it */
    if (!negative && exponent >= fraction) return 1;
    return (negative ? exponent + fraction : fraction - exponent) <= zeros;
}

tp_status tp_typed_json(tp_buf *out, tp_json *scanner, const uint32_t *types, uint32_t n_types,
                        const uint8_t *raw, size_t n, int *fits) {
    const uint8_t *text = raw;
    size_t len = n;
    uint32_t k;
    *fits = 1;
    while (len && tp_is_space(text[0])) text++, len--;
    while (len && tp_is_space(text[len - 1])) len--;
    for (k = 0; k < n_types; k++) {
        uint32_t kind = types[k], found;
        size_t used = 0;
        if (kind == TP_TYPE_STRING || kind == TP_TYPE_OTHER) return quoted(out, raw, n);
        if (kind == TP_TYPE_BOOLEAN && (len == 4 || len == 5)) {
            const char *want = len == 4 ? "true" : "false";
            size_t j;
            for (j = 0; j < len; j++) {
                uint8_t b = text[j];
                if (b >= 'A' && b <= 'Z') b = (uint8_t)(b + 32);
                if (b != (uint8_t)want[j]) break;
            }
            if (j == len) return tp_buf_append(out, want, len);
        }
        if (len == 0) continue;
        tp_json_reset(scanner);
        tp_json_feed(scanner, text, len, &used);
        if (tp_json_finish(scanner) != TP_JSON_COMPLETE || tp_json_end(scanner) != (int64_t)len)
            continue;
        switch (text[0]) {
        case '{':
            found = TP_TYPE_OBJECT;
            break;
        case '[':
            found = TP_TYPE_ARRAY;
            break;
        case 't':
        case 'f':
            found = TP_TYPE_BOOLEAN;
            break;
        case 'n':
            found = TP_TYPE_NULL;
            break;
        case '"':
            found = TP_TYPE_STRING;
            break;
        default:
            found = TP_TYPE_NUMBER;
            break;
        }
        if (kind == TP_TYPE_NUMBER && found == TP_TYPE_NUMBER) return tp_buf_append(out, text, len);
        if (kind == TP_TYPE_INTEGER && found == TP_TYPE_NUMBER && integral(text, len))
            return tp_buf_append(out, text, len);
        if ((kind == TP_TYPE_OBJECT || kind == TP_TYPE_ARRAY || kind == TP_TYPE_NULL) &&
            found == kind)
            return tp_buf_append(out, text, len);
        if (kind == TP_TYPE_JSON) return tp_buf_append(out, text, len); /* the output said: JSON */
    }
    *fits = 0;
    return TP_OK;
}

/* -- schema nodes ------------------------------------------------------------------------ */

int tp_m3_schema_valid(const uint8_t *node, size_t len, uint32_t depth) {
    tp_reader r;
    uint32_t n_types, n_props, k, items;
    if (depth > TP_M3_MAX_DEPTH) return 0;
    r.p = node, r.end = node + len, r.bad = 0;
    n_types = tp_read_u32(&r);
    if (n_types > TP_M3_MAX_TYPES || !tp_read_bytes(&r, n_types * 4u)) return 0;
    n_props = tp_read_u32(&r);
    if (n_props > len) return 0;
    for (k = 0; k < n_props && !r.bad; k++) {
        uint32_t m = tp_read_u32(&r), child;
        const uint8_t *at;
        tp_read_bytes(&r, m);
        child = tp_read_u32(&r);
        at = tp_read_bytes(&r, child);
        if (!at || !tp_m3_schema_valid(at, child, depth + 1)) return 0;
    }
    items = tp_read_u32(&r);
    if (items) {
        const uint8_t *at = tp_read_bytes(&r, items);
        if (!at || !tp_m3_schema_valid(at, items, depth + 1)) return 0;
    }
    return !r.bad && r.p == r.end;
}

/* What is known of the schema at one place of a value. */
typedef struct schema_at {
    int known; /* 0: the place is not in the schema */
    const uint32_t *types; /* at least one (string when the schema names none) */
    uint32_t n_types;
    const uint8_t *rest; /* the node after its types: properties, items */
    size_t rest_len;
    uint32_t buf[TP_M3_MAX_TYPES];
} schema_at;

static void schema_unknown(schema_at *at) {
    at->known = 0;
    at->types = string_only;
    at->n_types = 1;
    at->rest = NULL;
    at->rest_len = 0;
}

/* A node of a checked tool table (a short or bad one reads as no properties, no items). */
static void schema_open(schema_at *at, const uint8_t *node, size_t len) {
    tp_reader r;
    uint32_t k, n;
    r.p = node, r.end = node + len, r.bad = 0;
    n = tp_read_u32(&r);
    if (n > TP_M3_MAX_TYPES) n = 0;
    for (k = 0; k < n; k++) at->buf[k] = tp_read_u32(&r);
    at->known = 1;
    at->types = n && !r.bad ? at->buf : string_only;
    at->n_types = n && !r.bad ? n : 1;
    at->rest = r.bad ? NULL : r.p;
    at->rest_len = r.bad ? 0 : (size_t)(r.end - r.p);
}

/* The node of property name (child 1) or of the items (child 0): its bytes, or NULL. */
static const uint8_t *schema_child(const schema_at *at, const uint8_t *name, size_t name_len,
                                   int property, size_t *len) {
    tp_reader r;
    uint32_t n_props, k;
    *len = 0;
    if (!at->rest) return NULL;
    r.p = at->rest, r.end = at->rest + at->rest_len, r.bad = 0;
    n_props = tp_read_u32(&r);
    for (k = 0; k < n_props && !r.bad; k++) {
        uint32_t m = tp_read_u32(&r), child;
        const uint8_t *key = tp_read_bytes(&r, m);
        const uint8_t *node;
        child = tp_read_u32(&r);
        node = tp_read_bytes(&r, child);
        if (property && node && m == name_len && memcmp(key, name, m) == 0) {
            *len = child;
            return node;
        }
    }
    if (property || r.bad) return NULL;
    k = tp_read_u32(&r);
    {
        const uint8_t *node = k ? tp_read_bytes(&r, k) : NULL;
        *len = node ? k : 0;
        return node;
    }
}

static int has_type(const schema_at *at, uint32_t kind) {
    uint32_t k;
    for (k = 0; k < at->n_types; k++)
        if (at->types[k] == kind) return 1;
    return 0;
}

/* -- tags -------------------------------------------------------------------------------- */

static int ns_at(const uint8_t *s, size_t n, size_t k) {
    return n - k >= NS_LEN && memcmp(s + k, NS, NS_LEN) == 0;
}

/* The next namespace token at or after k, or n. */
static size_t find_ns(const uint8_t *s, size_t n, size_t k) {
    while (n - k >= NS_LEN) {
        const uint8_t *hit = (const uint8_t *)memchr(s + k, ']', n - k - NS_LEN + 1);
        if (!hit) break;
        k = (size_t)(hit - s);
        if (ns_at(s, n, k)) return k;
        k++;
    }
    return n;
}

/* A tag's name from k up to its '>' (no namespace token before it): 1 and the position
 * after the '>', or 0. */
static int tag_name(const uint8_t *s, size_t n, size_t k, size_t *end) {
    size_t j = k;
    while (j < n && s[j] != '>') {
        if (ns_at(s, n, j)) return 0;
        j++;
    }
    if (j == n) return 0;
    *end = j;
    return 1;
}

/* One child element from k on (after whitespace): 1 with its name and content, 0 when
 * only whitespace is left, -1 when the text is not a well-formed element. */
static int next_child(const uint8_t *s, size_t n, size_t *k, const uint8_t **name, size_t *name_len,
                      const uint8_t **content, size_t *content_len) {
    size_t j = *k, gt, start, depth = 0;
    while (j < n && tp_is_space(s[j])) j++;
    if (j == n) {
        *k = j;
        return 0;
    }
    if (!ns_at(s, n, j) || n - j == NS_LEN || s[j + NS_LEN] != '<') return -1;
    j += NS_LEN + 1;
    if (j < n && s[j] == '/') return -1;
    if (!tag_name(s, n, j, &gt) || gt == j) return -1;
    *name = s + j;
    *name_len = gt - j;
    start = j = gt + 1;
    for (;;) {
        size_t at = find_ns(s, n, j), from;
        if (at == n) return -1;
        from = at + NS_LEN;
        if (from < n && s[from] == '<' && from + 1 < n && s[from + 1] == '/') {
            if (!tag_name(s, n, from + 2, &gt)) return -1;
            if (depth == 0) {
                if (gt - (from + 2) != *name_len || memcmp(s + from + 2, *name, *name_len) != 0)
                    return -1;
                *content = s + start;
                *content_len = at - start;
                *k = gt + 1;
                return 1;
            }
            depth--;
            j = gt + 1;
        } else if (from < n && s[from] == '<') {
            if (!tag_name(s, n, from + 1, &gt)) return -1;
            depth++;
            j = gt + 1;
        } else {
            j = from;
        }
    }
}

/* 1 when s holds at least one child and every child is an <item>, 0 when not, -1 when
 * malformed. */
static int all_items(const uint8_t *s, size_t n) {
    size_t k = 0, name_len, content_len;
    const uint8_t *name, *content;
    int got, any = 0, items = 1;
    while ((got = next_child(s, n, &k, &name, &name_len, &content, &content_len)) == 1) {
        any = 1;
        if (name_len != 4 || memcmp(name, "item", 4) != 0) items = 0;
    }
    if (got < 0) return -1;
    return any && items;
}

/* -- values ------------------------------------------------------------------------------ */

typedef struct m3 {
    tp_buf *out;
    tp_json *scanner;
    int ok;
} m3;

static tp_status value(m3 *m, const schema_at *at, const uint8_t *s, size_t n, uint32_t depth);

static tp_status child_value(m3 *m, const schema_at *at, const uint8_t *name, size_t name_len,
                             int property, const uint8_t *s, size_t n, uint32_t depth) {
    schema_at child;
    size_t len;
    const uint8_t *node = schema_child(at, name, name_len, property, &len);
    if (node)
        schema_open(&child, node, len);
    else
        schema_unknown(&child);
    return value(m, &child, s, n, depth);
}

/* A value without nested tags, typed by its place's types; one that fits none of them
 * makes the tags malformed. */
static tp_status leaf(m3 *m, const schema_at *at, const uint8_t *s, size_t n) {
    int fits;
    TP_TRY(tp_typed_json(m->out, m->scanner, at->types, at->n_types, s, n, &fits));
    if (!fits) m->ok = 0;
    return TP_OK;
}

static tp_status value(m3 *m, const schema_at *at, const uint8_t *s, size_t n, uint32_t depth) {
    int object = !at->known || has_type(at, TP_TYPE_OBJECT);
    int array = !at->known || has_type(at, TP_TYPE_ARRAY);
    size_t k = 0, name_len, content_len;
    const uint8_t *name, *content;
    int got, first = 1;
    if (at->known && has_type(at, TP_TYPE_STRING)) return leaf(m, at, s, n);
    while (k < n && tp_is_space(s[k])) k++;
    if (k == n && array != object) return tp_buf_append(m->out, array ? "[]" : "{}", 2);
    if (k == n || find_ns(s, n, 0) == n) return leaf(m, at, s, n);
    if (depth >= TP_M3_MAX_DEPTH) {
        m->ok = 0;
        return TP_OK;
    }
    if (array == object) {
        int items = all_items(s, n);
        if (items < 0) {
            m->ok = 0;
            return TP_OK;
        }
        array = items;
    }
    TP_TRY(tp_buf_append(m->out, array ? "[" : "{", 1));
    k = 0;
    while ((got = next_child(s, n, &k, &name, &name_len, &content, &content_len)) == 1) {
        if (!first) TP_TRY(tp_buf_append(m->out, ", ", 2));
        first = 0;
        if (array) {
            if (name_len != 4 || memcmp(name, "item", 4) != 0) {
                m->ok = 0;
                return TP_OK;
            }
        } else {
            TP_TRY(quoted(m->out, name, name_len));
            TP_TRY(tp_buf_append(m->out, ": ", 2));
        }
        TP_TRY(child_value(m, at, name, name_len, !array, content, content_len, depth + 1));
        if (!m->ok) return TP_OK;
    }
    if (got < 0) {
        m->ok = 0;
        return TP_OK;
    }
    return tp_buf_append(m->out, array ? "]" : "}", 1);
}

tp_status tp_m3_value_to_json(tp_buf *out, tp_json *scanner, const uint32_t *types,
                              uint32_t n_types, const uint8_t *node, size_t node_len, int known,
                              const uint8_t *s, size_t n, int *ok) {
    schema_at at;
    m3 m;
    tp_status st;
    schema_unknown(&at);
    if (known && node) schema_open(&at, node, node_len);
    if (known) { /* the parameter's types, as the emitter read them */
        at.known = 1;
        at.types = types && n_types ? types : string_only;
        at.n_types = types && n_types ? n_types : 1;
    }
    m.out = out;
    m.scanner = scanner;
    m.ok = 1;
    st = value(&m, &at, s ? s : (const uint8_t *)"", n, 0);
    *ok = m.ok;
    return st;
}
