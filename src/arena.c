/* arena.c: the per-compilation arena (freed at once by arena_free) and two
 * small growable containers. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gj.h"

struct ArenaChunk {
    ArenaChunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

void *arena_alloc(Arena *a, size_t n) {
    n = (n + 15) & ~(size_t)15;
    ArenaChunk *ch = a->head;
    if (!ch || ch->used + n > ch->cap) {
        size_t cap = n > 65536 ? n : 65536;
        ch = malloc(sizeof(ArenaChunk) + cap);
        if (!ch) {
            PyErr_NoMemory();
            return NULL;
        }
        ch->next = a->head;
        ch->used = 0;
        ch->cap = cap;
        a->head = ch;
    }
    void *p = ch->data + ch->used;
    ch->used += n;
    memset(p, 0, n);
    return p;
}

char *arena_strdup(Arena *a, const char *s) {
    size_t n = strlen(s) + 1;
    char *p = arena_alloc(a, n);
    if (p) memcpy(p, s, n);
    return p;
}

char *arena_printf(Arena *a, const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = arena_alloc(a, (size_t)n + 1);
    if (p) vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}

void arena_free(Arena *a) {
    ArenaChunk *ch = a->head;
    while (ch) {
        ArenaChunk *next = ch->next;
        free(ch);
        ch = next;
    }
    a->head = NULL;
}

void vec_push(Arena *a, PtrVec *v, void *p) {
    if (v->n == v->cap) {
        int cap = v->cap ? v->cap * 2 : 8;
        void **nv = arena_alloc(a, sizeof(void *) * (size_t)cap);
        if (v->n) memcpy(nv, v->v, sizeof(void *) * (size_t)v->n);
        v->v = nv;
        v->cap = cap;
    }
    v->v[v->n++] = p;
}

void sb_printf(StrBuf *b, const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (b->n + (size_t)n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (cap < b->n + (size_t)n + 1) cap *= 2;
        b->s = realloc(b->s, cap);
        b->cap = cap;
    }
    vsnprintf(b->s + b->n, (size_t)n + 1, fmt, ap2);
    b->n += (size_t)n;
    va_end(ap2);
}

void sb_free(StrBuf *b) {
    free(b->s);
    b->s = NULL;
    b->n = b->cap = 0;
}
