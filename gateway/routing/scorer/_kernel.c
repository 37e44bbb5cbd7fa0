/*
 * The difficulty scorer's hot path in compiled code: the features of vector.py and text.py, hashed into
 * buckets (CRC-32 of a feature's UTF-8 name, masked to BITS bits, as vector.py's ``_bucket``), and the
 * two sums a block's share of the logit needs, the squared length of its counts and the dot product of
 * its counts with a model's weights.
 *
 * vector.py and text.py are the reference: they run wherever this module was not built (no C compiler
 * at install time) and for what this module declines (weights other than a model file's 16-bit
 * integers, text beyond ASCII for the text features, text that UTF-8 cannot encode). Both give the same
 * integers and the same feature names, so a score is the same bit for bit
 * (tests/test_router_scorer_kernel.py holds them equal on the routing corpus and on generated text).
 *
 * Why compiled: a chat turn of five words has about sixty hashed features and twenty shape features; in
 * Python each is an object, a call and a dictionary or set update, and a request's score touched enough
 * memory (code, sets, caches) to slow the rest of the request behind it. Here each feature is a few
 * dozen instructions over one scratch buffer, and the weights table is read in place.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define BITS 20
#define MASK ((1u << BITS) - 1u)
#define MAX_CHARS 8 /* the longest character n-gram read */
#define STACK_SLOTS 1024 /* a counting table of this many slots lives on the stack */

static uint32_t crc_table[256];

static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
}

/* The running state of zlib's CRC-32 (reflected, polynomial 0xEDB88320): start from 0xFFFFFFFF, feed
 * bytes, and the checksum is the state inverted. A shared prefix is fed once and its state reused. */
static inline uint32_t crc_feed(uint32_t state, const char *bytes, Py_ssize_t n) {
    const unsigned char *p = (const unsigned char *)bytes;
    while (n-- > 0) state = crc_table[(state ^ *p++) & 0xFFu] ^ (state >> 8);
    return state;
}

static inline uint32_t bucket_of(uint32_t state) { return ~state & MASK; }

/* Counts by bucket in an open-addressing table (a key is its bucket plus one: zero marks a free slot),
 * with the block's sums kept as it fills: the squared length grows by 2c + 1 when a count c becomes
 * c + 1, the dot product by the bucket's weight. */
typedef struct {
    uint32_t key;
    uint32_t count;
} Slot;

typedef struct {
    Slot *slots;
    size_t mask;
    long long sumsq;
    long long total;
    const int16_t *w;
    Slot stack[STACK_SLOTS];
    int heap;
} Block;

static int block_init(Block *b, Py_ssize_t items, const int16_t *w) {
    size_t size = 16;
    while (size < (size_t)items * 2) size <<= 1;
    b->heap = size > STACK_SLOTS;
    b->slots = b->heap ? PyMem_Calloc(size, sizeof(Slot)) : b->stack;
    if (b->slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    if (!b->heap) memset(b->stack, 0, size * sizeof(Slot));
    b->mask = size - 1;
    b->sumsq = 0;
    b->total = 0;
    b->w = w;
    return 0;
}

static void block_free(Block *b) {
    if (b->heap) PyMem_Free(b->slots);
}

static inline void block_add(Block *b, uint32_t bucket) {
    uint32_t key = bucket + 1u;
    size_t i = (bucket * 2654435761u) & b->mask;
    while (b->slots[i].key != 0 && b->slots[i].key != key) i = (i + 1) & b->mask;
    Slot *s = &b->slots[i];
    s->key = key;
    b->sumsq += 2LL * s->count + 1;
    s->count++;
    b->total += b->w[bucket];
}

static PyObject *block_result(Block *b) {
    PyObject *out = Py_BuildValue("(LL)", b->sumsq, b->total);
    block_free(b);
    return out;
}

/* A model file's weights: 2**BITS 16-bit integers, read in place. */
static int weights_of(PyObject *obj, Py_buffer *view) {
    if (PyObject_GetBuffer(obj, view, PyBUF_FORMAT | PyBUF_ND) < 0) return -1;
    if (view->itemsize != 2 || view->format == NULL || strcmp(view->format, "h") != 0 ||
        view->len != (Py_ssize_t)(2u << BITS)) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_TypeError, "weights: expected 2**20 16-bit integers (array('h'))");
        return -1;
    }
    return 0;
}

static int prefix_state(PyObject *prefix, const char *kind, uint32_t *state) {
    Py_ssize_t n;
    const char *bytes = PyUnicode_AsUTF8AndSize(prefix, &n);
    if (bytes == NULL) return -1;
    *state = crc_feed(crc_feed(0xFFFFFFFFu, bytes, n), kind, 2);
    return 0;
}

/* A word's UTF-8 bytes, from the string's own cache (no copy for ASCII). */
static const char *utf8_of(PyObject *token, Py_ssize_t *n) {
    if (!PyUnicode_Check(token)) {
        PyErr_SetString(PyExc_TypeError, "expected str");
        return NULL;
    }
    return PyUnicode_AsUTF8AndSize(token, n);
}

/* words(tokens, prefix, chars, pairs, weights) -> (squared length, dot product)
 *
 * The block of ``vector._words_part``: each word as ``<prefix>w:<word>``, its character n-grams of each
 * length in ``chars`` (of the word padded with a space at each end, by code point) as
 * ``<prefix>c:<n-gram>``, and with ``pairs`` each pair of neighbouring words as ``<prefix>b:<a> <b>``. */
static PyObject *words(PyObject *self, PyObject *args) {
    PyObject *tokens, *prefix, *chars, *weights;
    int pairs;
    if (!PyArg_ParseTuple(args, "O!UO!pO:words", &PyList_Type, &tokens, &prefix, &PyTuple_Type, &chars,
                          &pairs, &weights))
        return NULL;
    Py_ssize_t n_chars = PyTuple_GET_SIZE(chars);
    long lengths[8];
    if (n_chars > 8) {
        PyErr_SetString(PyExc_ValueError, "at most 8 n-gram lengths");
        return NULL;
    }
    for (Py_ssize_t k = 0; k < n_chars; k++) {
        lengths[k] = PyLong_AsLong(PyTuple_GET_ITEM(chars, k));
        if (lengths[k] == -1 && PyErr_Occurred()) return NULL;
        if (lengths[k] < 1 || lengths[k] > MAX_CHARS) {
            PyErr_SetString(PyExc_ValueError, "n-gram lengths are 1 to 8");
            return NULL;
        }
    }
    uint32_t word_state, char_state, pair_state;
    if (prefix_state(prefix, "w:", &word_state) < 0 || prefix_state(prefix, "c:", &char_state) < 0 ||
        prefix_state(prefix, "b:", &pair_state) < 0)
        return NULL;
    Py_buffer view;
    if (weights_of(weights, &view) < 0) return NULL;

    Py_ssize_t n_tokens = PyList_GET_SIZE(tokens);
    /* A bound on the features: each word, its n-grams (at most its length plus two for each n) and a
     * pair; sizing the table from it keeps it at most half full. */
    Py_ssize_t items = 0;
    for (Py_ssize_t t = 0; t < n_tokens; t++) {
        PyObject *token = PyList_GET_ITEM(tokens, t);
        if (!PyUnicode_Check(token)) {
            PyBuffer_Release(&view);
            PyErr_SetString(PyExc_TypeError, "tokens: expected a list of str");
            return NULL;
        }
        items += 2 + n_chars * (PyUnicode_GET_LENGTH(token) + 2);
    }
    Block block;
    if (block_init(&block, items, (const int16_t *)view.buf) < 0) {
        PyBuffer_Release(&view);
        return NULL;
    }
    Py_ssize_t *starts = NULL; /* byte offset of each code point of the padded word, and its end */
    Py_ssize_t starts_size = 0;
    char *padded = NULL;
    Py_ssize_t padded_size = 0;
    const char *previous = NULL;
    Py_ssize_t previous_n = 0;
    for (Py_ssize_t t = 0; t < n_tokens; t++) {
        PyObject *token = PyList_GET_ITEM(tokens, t);
        Py_ssize_t n;
        const char *bytes = utf8_of(token, &n);
        if (bytes == NULL) goto fail;
        block_add(&block, bucket_of(crc_feed(word_state, bytes, n)));
        if (pairs && previous != NULL) {
            uint32_t state = crc_feed(pair_state, previous, previous_n);
            state = crc_feed(state, " ", 1);
            block_add(&block, bucket_of(crc_feed(state, bytes, n)));
        }
        previous = bytes;
        previous_n = n;
        if (n_chars == 0) continue;
        Py_ssize_t points = PyUnicode_GET_LENGTH(token) + 2;
        if (padded_size < n + 2) {
            PyMem_Free(padded);
            padded_size = n + 2 > 64 ? n + 2 : 64;
            padded = PyMem_Malloc(padded_size);
            if (padded == NULL) {
                PyErr_NoMemory();
                goto fail;
            }
        }
        padded[0] = ' ';
        memcpy(padded + 1, bytes, n);
        padded[n + 1] = ' ';
        if (points == n + 2) { /* ASCII: a code point is a byte */
            for (Py_ssize_t k = 0; k < n_chars; k++) {
                Py_ssize_t len = lengths[k];
                for (Py_ssize_t i = 0; i + len <= points; i++)
                    block_add(&block, bucket_of(crc_feed(char_state, padded + i, len)));
            }
            continue;
        }
        if (starts_size < points + 1) {
            PyMem_Free(starts);
            starts_size = points + 1 > 64 ? points + 1 : 64;
            starts = PyMem_Malloc(starts_size * sizeof(Py_ssize_t));
            if (starts == NULL) {
                PyErr_NoMemory();
                goto fail;
            }
        }
        Py_ssize_t p = 0;
        for (Py_ssize_t i = 0; i < n + 2; i++)
            if (((unsigned char)padded[i] & 0xC0u) != 0x80u) starts[p++] = i;
        starts[p] = n + 2;
        for (Py_ssize_t k = 0; k < n_chars; k++) {
            Py_ssize_t len = lengths[k];
            for (Py_ssize_t i = 0; i + len <= points; i++)
                block_add(&block, bucket_of(crc_feed(char_state, padded + starts[i], starts[i + len] - starts[i])));
        }
    }
    PyMem_Free(starts);
    PyMem_Free(padded);
    PyBuffer_Release(&view);
    return block_result(&block);
fail:
    PyMem_Free(starts);
    PyMem_Free(padded);
    block_free(&block);
    PyBuffer_Release(&view);
    return NULL;
}

/* names(names, prefix, weights) -> (squared length, dot product)
 *
 * A block of named features (``vector._named_part``, the system prompt's words): each as
 * ``<prefix><name>``, any iterable of str. */
static PyObject *names(PyObject *self, PyObject *args) {
    PyObject *iterable, *prefix, *weights;
    if (!PyArg_ParseTuple(args, "OUO:names", &iterable, &prefix, &weights)) return NULL;
    Py_ssize_t n;
    const char *bytes = PyUnicode_AsUTF8AndSize(prefix, &n);
    if (bytes == NULL) return NULL;
    uint32_t start = crc_feed(0xFFFFFFFFu, bytes, n);
    PyObject *seq = PySequence_Fast(iterable, "names: expected an iterable of str");
    if (seq == NULL) return NULL;
    Py_buffer view;
    if (weights_of(weights, &view) < 0) {
        Py_DECREF(seq);
        return NULL;
    }
    Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
    Block block;
    if (block_init(&block, count, (const int16_t *)view.buf) < 0) {
        PyBuffer_Release(&view);
        Py_DECREF(seq);
        return NULL;
    }
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < count; i++) {
        const char *name = utf8_of(items[i], &n);
        if (name == NULL) {
            block_free(&block);
            PyBuffer_Release(&view);
            Py_DECREF(seq);
            return NULL;
        }
        block_add(&block, bucket_of(crc_feed(start, name, n)));
    }
    PyBuffer_Release(&view);
    Py_DECREF(seq);
    return block_result(&block);
}

/* ------------------------------------------------------------------------------------------------------
 * The text's features (text.py's ``featurize_blocks``) for ASCII text: its words, word pairs and pasted
 * words, hashed as ``x:<feature>`` into three blocks, and its shape features by name. text.py is the
 * reference and says what each feature is for; here is only how each is found, the same way: where
 * text.py runs a regular expression, the comment gives it, and the code matches where it would (each
 * pattern is simple enough to match without backtracking, as said at each). Other text (any character
 * beyond ASCII) is text.py's alone: ``text_sums`` returns None for it.
 * ------------------------------------------------------------------------------------------------------ */

/* What a word is in the lexicons (text.py passes the lists, ``tables``). */
enum {
    L_CODE = 1 << 0,
    L_VERB = 1 << 1,
    L_MATH = 1 << 2,
    L_TRANSFORM = 1 << 3,
    L_DOMAIN = 1 << 4,
    L_SOCIAL = 1 << 5,
    L_LAUGH = 1 << 6,
    L_QUANTITY = 1 << 7,
    L_UNIT = 1 << 8,
    L_NOT_NAME = 1 << 9,
    L_SECOND = 1 << 10,
    L_MERIDIEM = 1 << 11,
    L_CUE = 1 << 12,   /* a word whose next word may ask for a quantity ("how") */
    L_AFTER = 1 << 13, /* an entry "<cue> <next>": that next word after that cue ("how many") */
};

/* The shape features counted into buckets, in the order of text.py's ``KERNEL_SCALES``, and those
 * present or not, in the order of ``KERNEL_MARKS``. */
enum {
    S_CODE_TERMS, S_CODE_VERBS, S_MATH_TERMS, S_TRANSFORM_TERMS, S_DOMAIN_TERMS, S_CHATTY, S_SOCIAL_TERMS,
    S_ASKS_QUANTITY, S_NUMBERS, S_NAMES, S_WITH_UNIT, S_ARITHMETIC, S_NOTATION, S_QUESTIONS,
    S_CLOSING_QUESTION, S_SENTENCES, S_COMMAS, S_LIST, S_PARAGRAPHS, S_CODE, N_SCALES
};
enum {
    M_PAYLOAD, M_NAMES_DENSE, M_CLOCK, M_DATE, M_MONEY, M_PERCENT, M_TABLE, M_ENDS_WITH_QUESTION,
    M_ASKS_LISTENER, M_CLOSING_NUMBER, N_MARKS
};

typedef struct {
    uint32_t hash; /* 0: a free slot */
    uint32_t flags;
    Py_ssize_t n;
    char *word;
} Entry;

typedef struct {
    Entry *entries;
    size_t mask;
    PyObject *scales[2][N_SCALES]; /* tuples of names, "s:" then "ps:" */
    PyObject *marks[2][N_MARKS];   /* names, "s:" then "ps:" */
    char **emoticons;
    Py_ssize_t *emoticon_n;
    Py_ssize_t n_emoticons;
    Py_ssize_t head, tail; /* the window read of a long text (text.py HEAD_CHARS, TAIL_CHARS) */
} Tables;

static inline uint32_t fnv(const char *s, Py_ssize_t n) {
    uint32_t h = 2166136261u;
    for (Py_ssize_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h ? h : 1u;
}

static uint32_t lexicon(const Tables *T, const char *s, Py_ssize_t n) {
    uint32_t h = fnv(s, n);
    for (size_t i = h & T->mask;; i = (i + 1) & T->mask) {
        const Entry *e = &T->entries[i];
        if (e->hash == 0) return 0;
        if (e->hash == h && e->n == n && memcmp(e->word, s, n) == 0) return e->flags;
    }
}

static void tables_free(PyObject *capsule) {
    Tables *T = PyCapsule_GetPointer(capsule, "scorer.tables");
    if (T == NULL) return;
    if (T->entries != NULL)
        for (size_t i = 0; i <= T->mask; i++) PyMem_Free(T->entries[i].word);
    PyMem_Free(T->entries);
    for (int p = 0; p < 2; p++) {
        for (int k = 0; k < N_SCALES; k++) Py_XDECREF(T->scales[p][k]);
        for (int k = 0; k < N_MARKS; k++) Py_XDECREF(T->marks[p][k]);
    }
    for (Py_ssize_t k = 0; k < T->n_emoticons; k++) PyMem_Free(T->emoticons[k]);
    PyMem_Free(T->emoticons);
    PyMem_Free(T->emoticon_n);
    PyMem_Free(T);
}

static char *copy_ascii(PyObject *str, Py_ssize_t *n) {
    if (!PyUnicode_Check(str) || !PyUnicode_IS_ASCII(str)) return NULL;
    const char *bytes = PyUnicode_AsUTF8AndSize(str, n);
    if (bytes == NULL) return NULL;
    char *out = PyMem_Malloc(*n + 1);
    if (out != NULL) memcpy(out, bytes, *n + 1);
    return out;
}

/* tables(words, scales, marks, emoticons, head, tail) -> capsule
 *
 * ``words``: {word: flags} (the L_ bits above; entries beyond ASCII are left out: an ASCII text has
 * none of them); ``scales``: two tuples ("s:", "ps:") of N_SCALES tuples of names by count; ``marks``:
 * two tuples of N_MARKS names; ``emoticons``: the strings counted as chat. */
static PyObject *tables(PyObject *self, PyObject *args) {
    PyObject *words, *scales, *marks, *emoticons;
    Py_ssize_t head, tail;
    if (!PyArg_ParseTuple(args, "O!O!O!O!nn:tables", &PyDict_Type, &words, &PyTuple_Type, &scales,
                          &PyTuple_Type, &marks, &PyTuple_Type, &emoticons, &head, &tail))
        return NULL;
    if (PyTuple_GET_SIZE(scales) != 2 || PyTuple_GET_SIZE(marks) != 2) {
        PyErr_SetString(PyExc_ValueError, "scales and marks: one tuple for s: and one for ps:");
        return NULL;
    }
    Tables *T = PyMem_Calloc(1, sizeof(Tables));
    if (T == NULL) return PyErr_NoMemory();
    PyObject *capsule = PyCapsule_New(T, "scorer.tables", tables_free);
    if (capsule == NULL) {
        PyMem_Free(T);
        return NULL;
    }
    T->head = head;
    T->tail = tail;
    size_t size = 64;
    while (size < (size_t)PyDict_GET_SIZE(words) * 2) size <<= 1;
    T->entries = PyMem_Calloc(size, sizeof(Entry));
    if (T->entries == NULL) goto nomemory;
    T->mask = size - 1;
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(words, &pos, &key, &value)) {
        Py_ssize_t n;
        if (!PyUnicode_Check(key)) goto bad;
        if (!PyUnicode_IS_ASCII(key)) continue;
        long flags = PyLong_AsLong(value);
        if (flags == -1 && PyErr_Occurred()) goto fail;
        char *word = copy_ascii(key, &n);
        if (word == NULL) goto nomemory;
        uint32_t h = fnv(word, n);
        size_t i = h & T->mask;
        while (T->entries[i].hash != 0) i = (i + 1) & T->mask;
        T->entries[i] = (Entry){h, (uint32_t)flags, n, word};
    }
    for (int p = 0; p < 2; p++) {
        PyObject *s = PyTuple_GET_ITEM(scales, p), *m = PyTuple_GET_ITEM(marks, p);
        if (!PyTuple_Check(s) || PyTuple_GET_SIZE(s) != N_SCALES || !PyTuple_Check(m) ||
            PyTuple_GET_SIZE(m) != N_MARKS)
            goto bad;
        for (int k = 0; k < N_SCALES; k++) {
            PyObject *names = PyTuple_GET_ITEM(s, k);
            if (!PyTuple_Check(names) || PyTuple_GET_SIZE(names) == 0) goto bad;
            Py_INCREF(names);
            T->scales[p][k] = names;
        }
        for (int k = 0; k < N_MARKS; k++) {
            Py_INCREF(PyTuple_GET_ITEM(m, k));
            T->marks[p][k] = PyTuple_GET_ITEM(m, k);
        }
    }
    T->n_emoticons = PyTuple_GET_SIZE(emoticons);
    T->emoticons = PyMem_Calloc(T->n_emoticons + 1, sizeof(char *));
    T->emoticon_n = PyMem_Calloc(T->n_emoticons + 1, sizeof(Py_ssize_t));
    if (T->emoticons == NULL || T->emoticon_n == NULL) goto nomemory;
    for (Py_ssize_t k = 0; k < T->n_emoticons; k++) {
        T->emoticons[k] = copy_ascii(PyTuple_GET_ITEM(emoticons, k), &T->emoticon_n[k]);
        if (T->emoticons[k] == NULL || T->emoticon_n[k] == 0) goto bad;
    }
    return capsule;
nomemory:
    PyErr_NoMemory();
    goto fail;
bad:
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "tables: malformed lexicons or names");
fail:
    Py_DECREF(capsule);
    return NULL;
}

/* ---- the text ---- */

static inline int is_word(unsigned char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static inline int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static inline int is_lower(unsigned char c) { return c >= 'a' && c <= 'z'; }
static inline int is_upper(unsigned char c) { return c >= 'A' && c <= 'Z'; }
/* str.isspace() on ASCII: what str.rstrip() removes. */
static inline int is_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f); }

typedef struct {
    const char *s; /* into the lowered copy, or "0" for a word that starts with a digit */
    Py_ssize_t n;
    uint32_t hash;
    uint32_t flags;
    Py_ssize_t id; /* the word's index among the distinct words */
} Word;

typedef struct {
    const char *t; /* the text, as written */
    Py_ssize_t n;
    Word *words; /* text.py _folded: its words lowercased, a number folded into "0" */
    Py_ssize_t n_words;
    Word **distinct;
    Py_ssize_t n_distinct;
} Segment;

/* Scratch space for one text: the window is at most head + tail + 1 characters, so every array is
 * bounded by it; one allocation per call. */
typedef struct {
    char *window;
    char *lowered;
    Word *words;
    Word **distinct;
    Py_ssize_t *slots; /* open addressing over distinct words, then over distinct pairs */
    size_t mask;
} Scratch;

static const char ZERO[] = "0";

/* The words of t[0:n] (text.py _folded on ASCII: translate, lower, split), in ``words``; their distinct
 * values in ``distinct`` through the slot table, each word's id and lexicon flags set. */
static void fold(const Tables *T, Scratch *S, const char *t, Py_ssize_t n, char *lowered, Segment *g) {
    g->t = t;
    g->n = n;
    g->n_words = 0;
    g->n_distinct = 0;
    for (size_t i = 0; i <= S->mask; i++) S->slots[i] = -1;
    for (Py_ssize_t i = 0; i < n;) {
        if (!is_word((unsigned char)t[i])) {
            i++;
            continue;
        }
        Py_ssize_t start = i;
        while (i < n && is_word((unsigned char)t[i])) {
            unsigned char c = (unsigned char)t[i];
            lowered[i] = (char)(is_upper(c) ? c + 32 : c);
            i++;
        }
        Word *w = &g->words[g->n_words++];
        if (is_digit((unsigned char)t[start])) {
            w->s = ZERO;
            w->n = 1;
        } else {
            w->s = lowered + start;
            w->n = i - start;
        }
        w->hash = fnv(w->s, w->n);
        size_t k = w->hash & S->mask;
        for (;; k = (k + 1) & S->mask) {
            Py_ssize_t d = S->slots[k];
            if (d < 0) {
                S->slots[k] = g->n_distinct;
                w->id = g->n_distinct;
                w->flags = lexicon(T, w->s, w->n);
                g->distinct[g->n_distinct++] = w;
                break;
            }
            Word *o = g->distinct[d];
            if (o->hash == w->hash && o->n == w->n && memcmp(o->s, w->s, w->n) == 0) {
                w->id = o->id;
                w->flags = o->flags;
                break;
            }
        }
    }
}

static inline int has(const char *t, Py_ssize_t n, char c) { return n > 0 && memchr(t, c, n) != NULL; }

/* str.count: occurrences of ``needle`` that do not overlap. */
static Py_ssize_t count(const char *t, Py_ssize_t n, const char *needle, Py_ssize_t m) {
    Py_ssize_t found = 0;
    for (Py_ssize_t i = 0; i + m <= n;) {
        if (t[i] == needle[0] && memcmp(t + i, needle, m) == 0) {
            found++;
            i += m;
        } else
            i++;
    }
    return found;
}

static Py_ssize_t count_char(const char *t, Py_ssize_t n, char c) {
    Py_ssize_t found = 0;
    for (Py_ssize_t i = 0; i < n; i++) found += t[i] == c;
    return found;
}

static inline int contains(const char *t, Py_ssize_t n, const char *needle) {
    return count(t, n, needle, (Py_ssize_t)strlen(needle)) > 0;
}

static inline unsigned char at(const char *t, Py_ssize_t n, Py_ssize_t i) {
    return i >= 0 && i < n ? (unsigned char)t[i] : 0;
}

/* ``\d ?[ap]\.?m\b`` (ignoring case), searched. The optional space and dot never need to be given
 * back: what follows each is a letter. */
static int am_pm(const char *t, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!is_digit((unsigned char)t[i])) continue;
        Py_ssize_t j = i + 1;
        if (at(t, n, j) == ' ') j++;
        unsigned char c = at(t, n, j) | 0x20;
        if (c != 'a' && c != 'p') continue;
        j++;
        if (at(t, n, j) == '.') j++;
        if ((at(t, n, j) | 0x20) != 'm') continue;
        j++;
        if (j >= n || !is_word((unsigned char)t[j])) return 1;
    }
    return 0;
}

/* ``<sep>(?<=\d<sep>)\d{1,2}[/.-]\d``, searched: after a digit and the separator, one or two digits, a
 * separator, a digit. */
static int date_after(const char *t, Py_ssize_t n, char sep) {
    for (Py_ssize_t i = 1; i < n; i++) {
        if (t[i] != sep || !is_digit((unsigned char)t[i - 1]) || !is_digit(at(t, n, i + 1))) continue;
        Py_ssize_t j = is_digit(at(t, n, i + 2)) ? i + 3 : i + 2;
        unsigned char c = at(t, n, j);
        if ((c == '/' || c == '.' || c == '-') && is_digit(at(t, n, j + 1))) return 1;
    }
    return 0;
}

static inline int is_op(unsigned char c) { return c && strchr("-+*^=<>", c) != NULL; }

/* ``[0-9)] ?[-+*^=<>] ?[0-9(a-z]``, matches counted without overlap. An optional space is never given
 * back: what follows it would have to be the space itself. */
static Py_ssize_t arithmetic(const char *t, Py_ssize_t n) {
    Py_ssize_t found = 0;
    for (Py_ssize_t i = 0; i < n;) {
        unsigned char c = (unsigned char)t[i];
        if (is_digit(c) || c == ')') {
            Py_ssize_t j = i + 1;
            if (at(t, n, j) == ' ') j++;
            if (is_op(at(t, n, j))) {
                j++;
                if (at(t, n, j) == ' ') j++;
                unsigned char d = at(t, n, j);
                if (is_digit(d) || d == '(' || is_lower(d)) {
                    found++;
                    i = j + 1;
                    continue;
                }
            }
        }
        i++;
    }
    return found;
}

static const char *LATEX[] = {"frac", "int", "sum", "sqrt", "lim", "begin", "mathbb", "cdot", "le", "ge",
                              "neq", "pi", "binom", "pmod"};

/* Maths notation (text.py _notation): ``\\(?:frac|...)\b`` (no two names match at one place: each
 * needs a non-word character after it), "$$" once, ``[a-z0-9)]\^`` and ``\b[fgh]\([a-z0-9]\)``, all
 * counted. */
static Py_ssize_t notation(const char *t, Py_ssize_t n) {
    Py_ssize_t found = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)t[i];
        if (c == '\\') {
            for (size_t k = 0; k < sizeof LATEX / sizeof *LATEX; k++) {
                Py_ssize_t m = (Py_ssize_t)strlen(LATEX[k]);
                if (i + 1 + m <= n && memcmp(t + i + 1, LATEX[k], m) == 0 && !is_word(at(t, n, i + 1 + m))) {
                    found++;
                    break;
                }
            }
        } else if (c == '^') {
            unsigned char b = at(t, n, i - 1);
            found += i > 0 && (is_lower(b) || is_digit(b) || b == ')');
        } else if ((c == 'f' || c == 'g' || c == 'h') && (i == 0 || !is_word((unsigned char)t[i - 1])) &&
                   at(t, n, i + 1) == '(' && (is_lower(at(t, n, i + 2)) || is_digit(at(t, n, i + 2))) &&
                   at(t, n, i + 3) == ')') {
            found++;
        }
    }
    return found + contains(t, n, "$$");
}

/* ``\n[ \t]*(?:[-*]|\d{1,2}[.)])[ \t]`` on "\n" + text, counted: a line that opens with a list marker. */
static Py_ssize_t list_lines(const char *t, Py_ssize_t n) {
    Py_ssize_t found = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i > 0 && t[i - 1] != '\n') continue;
        Py_ssize_t j = i;
        while (j < n && (t[j] == ' ' || t[j] == '\t')) j++;
        unsigned char c = at(t, n, j);
        if (c == '-' || c == '*')
            j += 1;
        else if (is_digit(c)) {
            j += is_digit(at(t, n, j + 1)) ? 2 : 1;
            if (at(t, n, j) != '.' && at(t, n, j) != ')') continue;
            j += 1;
        } else
            continue;
        found += at(t, n, j) == ' ' || at(t, n, j) == '\t';
    }
    return found;
}

typedef struct {
    int names; /* 1: Python sets of the features' names (text_features); 0: hashed into blocks */
    Block blocks[3]; /* w:, b:, p: */
    uint32_t states[3]; /* the CRC state of "x:w:", "x:b:", "x:p:" */
    PyObject *sets[3];
    PyObject *shape; /* a list (hashed) or a set (names) */
} Sink;

enum { K_WORD, K_PAIR, K_PASTED };
static const char *KINDS[] = {"w:", "b:", "p:"};

static int emit(Sink *k, int kind, const Word *a, const Word *b) {
    if (!k->names) {
        uint32_t state = crc_feed(k->states[kind], a->s, a->n);
        if (b != NULL) state = crc_feed(crc_feed(state, " ", 1), b->s, b->n);
        block_add(&k->blocks[kind], bucket_of(state));
        return 0;
    }
    Py_ssize_t n = 2 + a->n + (b != NULL ? 1 + b->n : 0);
    PyObject *name = PyUnicode_New(n, 127);
    if (name == NULL) return -1;
    char *out = (char *)PyUnicode_1BYTE_DATA(name);
    memcpy(out, KINDS[kind], 2);
    memcpy(out + 2, a->s, a->n);
    if (b != NULL) {
        out[2 + a->n] = ' ';
        memcpy(out + 3 + a->n, b->s, b->n);
    }
    int rc = PySet_Add(k->sets[kind], name);
    Py_DECREF(name);
    return rc;
}

static int emit_name(Sink *k, PyObject *name) {
    return k->names ? PySet_Add(k->shape, name) : PyList_Append(k->shape, name);
}

static int scale(Sink *k, const Tables *T, int p, int which, Py_ssize_t value) {
    PyObject *names = T->scales[p][which];
    Py_ssize_t last = PyTuple_GET_SIZE(names) - 1;
    return emit_name(k, PyTuple_GET_ITEM(names, value < last ? value : last));
}

static int mark(Sink *k, const Tables *T, int p, int which) { return emit_name(k, T->marks[p][which]); }

#define TRY(x)                                                                                           \
    do {                                                                                                 \
        if ((x) < 0) return -1;                                                                          \
    } while (0)

/* The closing question (text.py _closing_question): ``t`` ends with "?" and no space. */
static int closing_question(Sink *k, const Tables *T, int p, const char *t, Py_ssize_t n) {
    Py_ssize_t body = n - 1, start = 0;
    for (Py_ssize_t i = body - 1; i >= 0; i--) {
        if (t[i] == '.' || t[i] == '!' || t[i] == '?' || t[i] == '\n') {
            start = i + 1;
            break;
        }
    }
    Py_ssize_t words = 0;
    int listener = 0, number = 0;
    for (Py_ssize_t i = start; i < body;) {
        if (!is_word((unsigned char)t[i])) {
            i++;
            continue;
        }
        Py_ssize_t s = i;
        char lowered[64];
        while (i < body && is_word((unsigned char)t[i])) i++;
        words++;
        if (is_digit((unsigned char)t[s])) {
            number = 1;
        } else if (i - s < (Py_ssize_t)sizeof lowered) {
            for (Py_ssize_t j = s; j < i; j++) lowered[j - s] = (char)(is_upper((unsigned char)t[j]) ? t[j] + 32 : t[j]);
            listener |= (lexicon(T, lowered, i - s) & L_SECOND) != 0;
        }
    }
    TRY(scale(k, T, p, S_CLOSING_QUESTION, words));
    if (listener) TRY(mark(k, T, p, M_ASKS_LISTENER));
    if (number) TRY(mark(k, T, p, M_CLOSING_NUMBER));
    return 0;
}

/* Names in mid-sentence (text.py _MID_CAPITAL, `` (?<=[\w,;)] )([A-Z][a-z]+)`` on ASCII): distinct
 * capitalised words after a word character, a comma, a semicolon or a bracket and a space, less those
 * whose lowercase is a word that opens a sentence (NOT_NAMES). */
static Py_ssize_t names_in(const Tables *T, Scratch *S, const char *t, Py_ssize_t n) {
    /* The slots hold the distinct names' starts now (the words' table is not needed after fold). */
    for (size_t i = 0; i <= S->mask; i++) S->slots[i] = -1;
    Py_ssize_t kept = 0;
    for (Py_ssize_t i = 1; i + 2 < n; i++) {
        if (t[i] != ' ') continue;
        unsigned char b = (unsigned char)t[i - 1];
        if (!(is_word(b) || b == ',' || b == ';' || b == ')') || !is_upper((unsigned char)t[i + 1]) ||
            !is_lower((unsigned char)t[i + 2]))
            continue;
        Py_ssize_t s = i + 1, e = i + 2;
        while (e < n && is_lower((unsigned char)t[e])) e++;
        uint32_t h = fnv(t + s, e - s);
        int seen = 0;
        size_t k = h & S->mask;
        for (;; k = (k + 1) & S->mask) {
            Py_ssize_t o = S->slots[k];
            if (o < 0) break;
            Py_ssize_t oe = o + 1;
            while (oe < n && is_lower((unsigned char)t[oe])) oe++;
            if (oe - o == e - s && memcmp(t + o, t + s, e - s) == 0) {
                seen = 1;
                break;
            }
        }
        if (seen) continue;
        S->slots[k] = s;
        char lowered[64];
        if (e - s < (Py_ssize_t)sizeof lowered) {
            lowered[0] = (char)(t[s] + 32);
            memcpy(lowered + 1, t + s + 1, e - s - 1);
            if (lexicon(T, lowered, e - s) & L_NOT_NAME) continue;
        }
        kept++;
    }
    return kept;
}

/* The shape of one segment (text.py _shape), its names from the "s:" (p = 0) or "ps:" (p = 1) table. */
static int shape(Sink *k, const Tables *T, Scratch *S, int p, const Segment *g) {
    const char *t = g->t;
    Py_ssize_t n = g->n;
    Py_ssize_t code = 0, verbs = 0, maths = 0, transform = 0, domain = 0, social = 0, laughter = 0,
               quantity = 0, meridiem = 0;
    for (Py_ssize_t d = 0; d < g->n_distinct; d++) {
        uint32_t f = g->distinct[d]->flags;
        code += (f & L_CODE) != 0;
        verbs += (f & L_VERB) != 0;
        maths += (f & L_MATH) != 0;
        transform += (f & L_TRANSFORM) != 0;
        domain += (f & L_DOMAIN) != 0;
        social += (f & L_SOCIAL) != 0;
        laughter += (f & L_LAUGH) != 0;
        quantity += (f & L_QUANTITY) != 0;
        meridiem |= (f & L_MERIDIEM) != 0;
    }
    int is_signed = contains(t, n, "++") ||
                    (has(t, n, '#') && (contains(t, n, "C#") || contains(t, n, "c#") || contains(t, n, "F#")));
    TRY(scale(k, T, p, S_CODE_TERMS, code + is_signed));
    TRY(scale(k, T, p, S_CODE_VERBS, verbs));
    TRY(scale(k, T, p, S_MATH_TERMS, maths));
    TRY(scale(k, T, p, S_TRANSFORM_TERMS, transform));
    TRY(scale(k, T, p, S_DOMAIN_TERMS, domain + is_signed));
    Py_ssize_t chatty = count_char(t, n, '!') + laughter;
    for (Py_ssize_t e = 0; e < T->n_emoticons; e++) chatty += count(t, n, T->emoticons[e], T->emoticon_n[e]);
    TRY(scale(k, T, p, S_CHATTY, chatty));
    TRY(scale(k, T, p, S_SOCIAL_TERMS, social));
    Py_ssize_t numbers = 0, units = 0;
    char pair[2 * 64 + 2];
    for (Py_ssize_t i = 0; i < g->n_words; i++) {
        const Word *w = &g->words[i], *next = i + 1 < g->n_words ? &g->words[i + 1] : NULL;
        numbers += w->s == ZERO;
        if (next == NULL) continue;
        units += w->s == ZERO && (next->flags & L_UNIT) != 0;
        if ((w->flags & L_CUE) && w->n + next->n + 1 < (Py_ssize_t)sizeof pair) {
            memcpy(pair, w->s, w->n);
            pair[w->n] = ' ';
            memcpy(pair + w->n + 1, next->s, next->n);
            quantity += (lexicon(T, pair, w->n + 1 + next->n) & L_AFTER) != 0;
        }
    }
    TRY(scale(k, T, p, S_ASKS_QUANTITY, quantity));
    TRY(scale(k, T, p, S_NUMBERS, numbers));
    Py_ssize_t names = names_in(T, S, t, n);
    if (names >= 5 && g->n_distinct >= 30 && 4 * names > g->n_distinct)
        TRY(mark(k, T, p, M_NAMES_DENSE));
    else
        TRY(scale(k, T, p, S_NAMES, names));
    if (numbers) {
        TRY(scale(k, T, p, S_WITH_UNIT, units));
        int clock = 0;
        /* ``:(?<=\d:)[0-5]\d`` searched, or the am/pm pattern when "am" or "pm" is a word */
        for (Py_ssize_t i = 1; i < n && !clock; i++)
            clock = t[i] == ':' && is_digit((unsigned char)t[i - 1]) && at(t, n, i + 1) >= '0' &&
                    at(t, n, i + 1) <= '5' && is_digit(at(t, n, i + 2));
        if (clock || (meridiem && am_pm(t, n))) TRY(mark(k, T, p, M_CLOCK));
        if ((has(t, n, '/') || has(t, n, '-') || (numbers > 2 && has(t, n, '.'))) &&
            (date_after(t, n, '/') || date_after(t, n, '.') || date_after(t, n, '-')))
            TRY(mark(k, T, p, M_DATE));
        if (has(t, n, '$')) TRY(mark(k, T, p, M_MONEY));
        if (has(t, n, '%')) TRY(mark(k, T, p, M_PERCENT));
        /* counted only where the text holds one of "+*=^<>/" (text.py _ARITHMETIC_CHARS): not for "-" */
        int ops = 0;
        for (const char *c = "+*=^<>/"; *c && !ops; c++) ops = has(t, n, *c);
        Py_ssize_t sums = ops ? arithmetic(t, n) : 0;
        if (sums) TRY(scale(k, T, p, S_ARITHMETIC, sums));
    }
    Py_ssize_t math = notation(t, n);
    if (math) TRY(scale(k, T, p, S_NOTATION, math));
    TRY(scale(k, T, p, S_QUESTIONS, count_char(t, n, '?')));
    Py_ssize_t stripped = n;
    while (stripped > 0 && is_space((unsigned char)t[stripped - 1])) stripped--;
    if (stripped > 0 && t[stripped - 1] == '?') {
        TRY(mark(k, T, p, M_ENDS_WITH_QUESTION));
        TRY(closing_question(k, T, p, t, stripped));
    }
    Py_ssize_t sentences = count(t, n, ". ", 2) + count(t, n, "? ", 2) + count(t, n, "! ", 2) + count(t, n, ".\n", 2);
    TRY(scale(k, T, p, S_SENTENCES, sentences));
    Py_ssize_t commas = count_char(t, n, ',');
    TRY(scale(k, T, p, S_COMMAS, commas));
    if (has(t, n, '\n')) {
        Py_ssize_t lines = list_lines(t, n);
        if (lines) TRY(scale(k, T, p, S_LIST, lines));
        int table = count_char(t, n, '|') >= 6;
        if (!table && commas >= 6) {
            Py_ssize_t rows = 0, in_line = 0;
            for (Py_ssize_t i = 0; i <= n; i++) {
                if (i == n || t[i] == '\n') {
                    rows += in_line >= 2;
                    in_line = 0;
                } else
                    in_line += t[i] == ',';
            }
            table = rows >= 3;
        }
        if (table) TRY(mark(k, T, p, M_TABLE));
        TRY(scale(k, T, p, S_PARAGRAPHS, count(t, n, "\n\n", 2) + 1));
    }
    Py_ssize_t camel = 0;
    for (Py_ssize_t i = 1; i < n; i++) camel += is_upper((unsigned char)t[i]) && is_lower((unsigned char)t[i - 1]);
    Py_ssize_t code_chars = camel + count_char(t, n, '_') + count(t, n, "()", 2) + count(t, n, "=>", 2) +
                            count(t, n, "::", 2) + count(t, n, "&&", 2) + count(t, n, "||", 2) +
                            count_char(t, n, '{') + count(t, n, "</", 2) + count_char(t, n, '`');
    if (code_chars) TRY(scale(k, T, p, S_CODE, code_chars));
    return 0;
}

/* text.py split_payload: (instruction, payload) as offsets into the window. */
static void split_payload(const char *t, Py_ssize_t n, Py_ssize_t *is, Py_ssize_t *ie, Py_ssize_t *ps,
                          Py_ssize_t *pe) {
    Py_ssize_t split = -1, last = -1;
    for (Py_ssize_t i = 0; i + 1 < n; i++)
        if (t[i] == '\n' && t[i + 1] == '\n') {
            if (split < 0) split = i;
            last = i;
        }
    if (split >= 0 && split <= 300 && n - split > 2 * (split > 100 ? split : 100) &&
        (split == 0 || t[split - 1] != ',')) {
        *is = 0, *ie = split, *ps = split + 2, *pe = n;
        return;
    }
    Py_ssize_t tail = n - last;
    if (last > 0 && tail <= 300 && last > 2 * (tail > 100 ? tail : 100)) {
        *is = last + 2, *ie = n, *ps = 0, *pe = last;
        return;
    }
    *is = 0, *ie = n, *ps = 0, *pe = 0;
}

/* Each distinct pair of neighbouring words (text.py _words: ``set(pairwise(folded))``), by the ids of
 * its two words, through the slot table. */
static int pairs_of(Sink *k, Scratch *S, const Segment *g) {
    for (size_t i = 0; i <= S->mask; i++) S->slots[i] = -1;
    for (Py_ssize_t i = 0; i + 1 < g->n_words; i++) {
        const Word *a = &g->words[i], *b = &g->words[i + 1];
        Py_ssize_t key = a->id * (g->n_distinct + 1) + b->id;
        size_t slot = ((size_t)key * 2654435761u) & S->mask;
        while (S->slots[slot] >= 0 && S->slots[slot] != key) slot = (slot + 1) & S->mask;
        if (S->slots[slot] == key) continue;
        S->slots[slot] = key;
        TRY(emit(k, K_PAIR, a, b));
    }
    return 0;
}

static int words_of(Sink *k, int kind, const Segment *g) {
    for (Py_ssize_t d = 0; d < g->n_distinct; d++) TRY(emit(k, kind, g->distinct[d], NULL));
    return 0;
}

/* The whole of featurize_blocks for an ASCII text of ``size`` characters, into the sink. */
static int featurize(Sink *k, const Tables *T, const char *text, Py_ssize_t size) {
    Py_ssize_t n = size > T->head + T->tail ? T->head + T->tail + 1 : size;
    size_t slots = 64;
    while (slots < 2 * (size_t)(n + 1)) slots <<= 1;
    /* One allocation: the window and its lowered copy, padded to pointer alignment, then the words,
     * the distinct words and the slot table, each with room for every character. */
    size_t chars = ((size_t)2 * (n + 1) + 15) & ~(size_t)15;
    char *memory = PyMem_Malloc(chars + (n + 1) * (sizeof(Word) + sizeof(Word *)) + slots * sizeof(Py_ssize_t));
    if (memory == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    Scratch S;
    S.window = memory;
    S.lowered = memory + n + 1;
    S.words = (Word *)(memory + chars);
    S.distinct = (Word **)(S.words + n + 1);
    S.slots = (Py_ssize_t *)(S.distinct + n + 1);
    S.mask = slots - 1;
    if (n < size) { /* a long text: its first head and last tail characters, joined by a newline */
        memcpy(S.window, text, T->head);
        S.window[T->head] = '\n';
        memcpy(S.window + T->head + 1, text + size - T->tail, T->tail);
    } else {
        memcpy(S.window, text, n);
    }
    const char *t = S.window;
    Py_ssize_t is, ie, ps, pe;
    split_payload(t, n, &is, &ie, &ps, &pe);
    Segment g;
    g.words = S.words;
    g.distinct = S.distinct;
    int rc = -1;
    fold(T, &S, t + is, ie - is, S.lowered + is, &g);
    if (words_of(k, K_WORD, &g) < 0 || pairs_of(k, &S, &g) < 0 || shape(k, T, &S, 0, &g) < 0) goto done;
    if (pe > ps) {
        if (mark(k, T, 0, M_PAYLOAD) < 0) goto done;
        fold(T, &S, t + ps, pe - ps, S.lowered + ps, &g);
        if (words_of(k, K_PASTED, &g) < 0 || shape(k, T, &S, 1, &g) < 0) goto done;
    }
    rc = 0;
done:
    PyMem_Free(memory);
    return rc;
}

static int tables_of(PyObject *capsule, const Tables **T) {
    *T = PyCapsule_GetPointer(capsule, "scorer.tables");
    return *T == NULL ? -1 : 0;
}

/* text_sums(text, tables, weights) -> ((squared length, dot) of the w:, b: and p: blocks, [shape
 * names]), or None for text beyond ASCII (text.py's alone). */
static PyObject *text_sums(PyObject *self, PyObject *args) {
    PyObject *text, *capsule, *weights;
    if (!PyArg_ParseTuple(args, "UOO:text_sums", &text, &capsule, &weights)) return NULL;
    if (!PyUnicode_IS_ASCII(text)) Py_RETURN_NONE;
    const Tables *T;
    if (tables_of(capsule, &T) < 0) return NULL;
    Py_buffer view;
    if (weights_of(weights, &view) < 0) return NULL;
    Py_ssize_t size = PyUnicode_GET_LENGTH(text);
    Py_ssize_t n = size > T->head + T->tail ? T->head + T->tail + 1 : size;
    Sink k;
    k.names = 0;
    int ready = 0;
    PyObject *out = NULL;
    k.shape = PyList_New(0);
    if (k.shape == NULL) goto done;
    for (; ready < 3; ready++) {
        if (block_init(&k.blocks[ready], n + 1, (const int16_t *)view.buf) < 0) goto done;
        k.states[ready] = crc_feed(crc_feed(0xFFFFFFFFu, "x:", 2), KINDS[ready], 2);
    }
    if (featurize(&k, T, (const char *)PyUnicode_DATA(text), size) < 0) goto done;
    out = Py_BuildValue("((LL)(LL)(LL)O)", k.blocks[0].sumsq, k.blocks[0].total, k.blocks[1].sumsq,
                        k.blocks[1].total, k.blocks[2].sumsq, k.blocks[2].total, k.shape);
done:
    while (ready-- > 0) block_free(&k.blocks[ready]);
    Py_XDECREF(k.shape);
    PyBuffer_Release(&view);
    return out;
}

/* text_features(text, tables) -> (w: names, b: names, p: names, shape names) as sets, or None beyond
 * ASCII: what text_sums hashes, by name, for the tests to hold equal to text.py's. */
static PyObject *text_features(PyObject *self, PyObject *args) {
    PyObject *text, *capsule;
    if (!PyArg_ParseTuple(args, "UO:text_features", &text, &capsule)) return NULL;
    if (!PyUnicode_IS_ASCII(text)) Py_RETURN_NONE;
    const Tables *T;
    if (tables_of(capsule, &T) < 0) return NULL;
    Sink k;
    k.names = 1;
    PyObject *out = NULL;
    k.sets[0] = PySet_New(NULL);
    k.sets[1] = PySet_New(NULL);
    k.sets[2] = PySet_New(NULL);
    k.shape = PySet_New(NULL);
    if (k.sets[0] && k.sets[1] && k.sets[2] && k.shape &&
        featurize(&k, T, (const char *)PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text)) == 0)
        out = PyTuple_Pack(4, k.sets[0], k.sets[1], k.sets[2], k.shape);
    Py_XDECREF(k.sets[0]);
    Py_XDECREF(k.sets[1]);
    Py_XDECREF(k.sets[2]);
    Py_XDECREF(k.shape);
    return out;
}

/* bucket(name) -> int: ``vector._bucket`` for a name UTF-8 can encode. */
static PyObject *bucket(PyObject *self, PyObject *arg) {
    Py_ssize_t n;
    const char *bytes = utf8_of(arg, &n);
    if (bytes == NULL) return NULL;
    return PyLong_FromUnsignedLong(bucket_of(crc_feed(0xFFFFFFFFu, bytes, n)));
}

static PyMethodDef methods[] = {
    {"words", words, METH_VARARGS, "(tokens, prefix, chars, pairs, weights) -> (squared length, dot)"},
    {"names", names, METH_VARARGS, "(names, prefix, weights) -> (squared length, dot)"},
    {"bucket", bucket, METH_O, "A feature name's bucket."},
    {"tables", tables, METH_VARARGS, "(words, scales, marks, emoticons, head, tail) -> the text's tables"},
    {"text_sums", text_sums, METH_VARARGS, "(text, tables, weights) -> the text's blocks' sums and shape"},
    {"text_features", text_features, METH_VARARGS, "(text, tables) -> the text's features by name"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_kernel", "The scorer's hashed blocks in compiled code (vector.py is the reference).",
    -1, methods,
};

PyMODINIT_FUNC PyInit__kernel(void) {
    crc_init();
    return PyModule_Create(&module);
}
