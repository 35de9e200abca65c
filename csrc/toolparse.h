/* toolparse.h: the public C API of the toolparse core. */
#ifndef TOOLPARSE_H
#define TOOLPARSE_H

#include "batch.h"
#include "common.h"
#include "json.h"
#include "pool.h"
#include "program.h"
#include "stream.h"
#include "trie.h"
#include "vocab.h"

#endif
