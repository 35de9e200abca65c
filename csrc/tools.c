/* tools.c: loads and looks up the tool table. */
#include "tools.h"

#include <string.h>

#include "alloc.h"
#include "m3value.h"
#include "reader.h"

typedef struct tool_param {
    uint32_t name_off, name_len, types_off, n_types;
    size_t schema_off, schema_len; /* its schema node in schemas (length 0: none) */
} tool_param;

typedef struct tool_entry {
    uint32_t name_off, name_len, params_off, n_params;
} tool_entry;

struct tp_tools {
    uint32_t n_tools;
    tool_entry *tools;
    tool_param *params;
    uint32_t *types;
    uint8_t *names;
    uint8_t *schemas; /* the blob's schema nodes, one per parameter (may be NULL) */
    tp_allocator alloc;
};

void tp_tools_free(tp_tools *t) {
    tp_allocator a;
    if (!t) return;
    a = t->alloc;
    tp_free(&a, t->tools);
    tp_free(&a, t->params);
    tp_free(&a, t->types);
    tp_free(&a, t->names);
    tp_free(&a, t->schemas);
    tp_free(&a, t);
}

tp_status tp_tools_new(const uint8_t *blob, size_t len, tp_tools **out) {
    return tp_tools_new_with(NULL, blob, len, out);
}

tp_status tp_tools_new_with(const tp_allocator *alloc, const uint8_t *blob, size_t len,
                            tp_tools **out) {
    tp_allocator a;
    tp_reader r, count;
    tp_tools *t;
    uint32_t k, j, n_params = 0, n_types = 0, n_names = 0;
    if (!blob || !out) return TP_ERR_ARG;
    *out = NULL;
    TP_TRY(tp_allocator_init(&a, alloc));
    r.p = blob, r.end = blob + len, r.bad = 0;
    count = r;
    /* first pass: sizes */
    {
        uint32_t n_tools = tp_read_u32(&count);
        if (n_tools > len) return TP_ERR_ARG;
        for (k = 0; k < n_tools && !count.bad; k++) {
            uint32_t n = tp_read_u32(&count), np;
            tp_read_bytes(&count, n);
            n_names += n;
            np = tp_read_u32(&count);
            if (np > len) return TP_ERR_ARG;
            for (j = 0; j < np && !count.bad; j++) {
                uint32_t m = tp_read_u32(&count), nt;
                tp_read_bytes(&count, m);
                n_names += m;
                nt = tp_read_u32(&count);
                if (!tp_read_bytes(&count, nt * 4u) || nt > 64) return TP_ERR_ARG;
                n_types += nt;
            }
            n_params += np;
        }
        if (count.bad) return TP_ERR_ARG;
        /* then, optionally, each parameter's schema node (u32 length, node) in order */
        if (count.p != count.end) {
            for (k = 0; k < n_params && !count.bad; k++) {
                uint32_t m = tp_read_u32(&count);
                const uint8_t *node = tp_read_bytes(&count, m);
                if (!node || (m && !tp_m3_schema_valid(node, m, 0))) return TP_ERR_ARG;
            }
            if (count.bad || count.p != count.end) return TP_ERR_ARG;
        }
    }
    t = (tp_tools *)tp_alloc_zeroed(&a, sizeof *t);
    if (!t) return TP_ERR_NOMEM;
    t->alloc = a;
    t->n_tools = tp_read_u32(&r);
    t->tools = (tool_entry *)tp_alloc_array_zeroed(&a, t->n_tools, sizeof(tool_entry));
    t->params = (tool_param *)tp_alloc_array_zeroed(&a, n_params, sizeof(tool_param));
    t->types = (uint32_t *)tp_alloc_array_zeroed(&a, n_types, sizeof(uint32_t));
    t->names = (uint8_t *)tp_alloc(&a, n_names);
    if (!t->tools || !t->params || !t->types || !t->names) {
        tp_tools_free(t);
        return TP_ERR_NOMEM;
    }
    n_params = n_types = n_names = 0;
    for (k = 0; k < t->n_tools; k++) {
        tool_entry *tool = &t->tools[k];
        tool->name_len = tp_read_u32(&r);
        tool->name_off = n_names;
        memcpy(t->names + n_names, tp_read_bytes(&r, tool->name_len), tool->name_len);
        n_names += tool->name_len;
        tool->n_params = tp_read_u32(&r);
        tool->params_off = n_params;
        for (j = 0; j < tool->n_params; j++) {
            tool_param *p = &t->params[n_params++];
            uint32_t q;
            p->name_len = tp_read_u32(&r);
            p->name_off = n_names;
            memcpy(t->names + n_names, tp_read_bytes(&r, p->name_len), p->name_len);
            n_names += p->name_len;
            p->n_types = tp_read_u32(&r);
            p->types_off = n_types;
            for (q = 0; q < p->n_types; q++) t->types[n_types++] = tp_read_u32(&r);
        }
    }
    if (r.p != r.end) { /* the schema nodes, checked above */
        size_t off = 0, size = (size_t)(r.end - r.p);
        t->schemas = (uint8_t *)tp_alloc(&a, size);
        if (!t->schemas) {
            tp_tools_free(t);
            return TP_ERR_NOMEM;
        }
        for (k = 0; k < n_params; k++) {
            uint32_t m = tp_read_u32(&r);
            t->params[k].schema_off = off;
            t->params[k].schema_len = m;
            memcpy(t->schemas + off, tp_read_bytes(&r, m), m);
            off += m;
        }
    }
    *out = t;
    return TP_OK;
}

int32_t tp_tools_find(const tp_tools *t, const uint8_t *name, size_t len) {
    uint32_t k;
    for (k = 0; k < t->n_tools; k++) {
        const tool_entry *tool = &t->tools[k];
        if (tool->name_len == len && memcmp(t->names + tool->name_off, name, len) == 0)
            return (int32_t)k;
    }
    return -1;
}

uint32_t tp_tools_param_count(const tp_tools *t, int32_t tool) {
    if (tool < 0 || (uint32_t)tool >= t->n_tools) return 0;
    return t->tools[tool].n_params;
}

const uint32_t *tp_tools_param_types(const tp_tools *t, int32_t tool, const uint8_t *name,
                                     size_t len, uint32_t *n_types) {
    uint32_t j;
    *n_types = 0;
    if (tool < 0 || (uint32_t)tool >= t->n_tools) return NULL;
    for (j = 0; j < t->tools[tool].n_params; j++) {
        const tool_param *p = &t->params[t->tools[tool].params_off + j];
        if (p->name_len == len && memcmp(t->names + p->name_off, name, len) == 0) {
            *n_types = p->n_types;
            return t->types + p->types_off;
        }
    }
    return NULL;
}

int tp_tools_param_cut(const tp_tools *t, int32_t tool, const uint8_t *text, size_t len,
                       const uint8_t *end, size_t end_len) {
    uint32_t j;
    if (tool < 0 || (uint32_t)tool >= t->n_tools) return 0;
    for (j = 0; j < t->tools[tool].n_params; j++) {
        const tool_param *p = &t->params[t->tools[tool].params_off + j];
        const uint8_t *name = t->names + p->name_off;
        if (len <= p->name_len) {
            if (memcmp(name, text, len) == 0) return 1;
        } else if (len - p->name_len < end_len && memcmp(name, text, p->name_len) == 0 &&
                   memcmp(end, text + p->name_len, len - p->name_len) == 0) {
            return 1;
        }
    }
    return 0;
}

const uint8_t *tp_tools_param_schema(const tp_tools *t, int32_t tool, const uint8_t *name,
                                     size_t len, size_t *node_len) {
    uint32_t j;
    *node_len = 0;
    if (!t->schemas || tool < 0 || (uint32_t)tool >= t->n_tools) return NULL;
    for (j = 0; j < t->tools[tool].n_params; j++) {
        const tool_param *p = &t->params[t->tools[tool].params_off + j];
        if (p->name_len == len && memcmp(t->names + p->name_off, name, len) == 0) {
            if (!p->schema_len) return NULL;
            *node_len = p->schema_len;
            return t->schemas + p->schema_off;
        }
    }
    return NULL;
}
