/* gemmavalue.h: a Gemma 4 tool-call value (bare dict keys, strings between <|"|> tokens)
 * to JSON text (internal). */
#ifndef TOOLPARSE_GEMMAVALUE_H
#define TOOLPARSE_GEMMAVALUE_H

#include "buffer.h"
#include "common.h"

/* String delimiters: Gemma 4's token, FunctionGemma's. */
#define TP_GEMMA_QUOTE "<|\"|>"
#define TP_FUNCTIONGEMMA_QUOTE "<escape>"

/* Appends the JSON text of the Gemma 4 value s[0..n) (delimited by the format's grammar):
 * a string between two quote texts (TP_GEMMA_QUOTE, or FunctionGemma's TP_FUNCTIONGEMMA_QUOTE)
 * becomes a JSON string of its raw text, a dict key
 * (the text between two quote texts, or the text before its colon) a JSON string, numbers, true, false and null stay, and the
 * separators become ", " and ": ".  Input it was not made for gives some output without
 * reading outside s. */
tp_status tp_gemma_value_to_json(tp_buf *out, const uint8_t *s, size_t n, const char *quote);

#endif
