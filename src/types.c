/* types.c: the type lattice of kernels, numba.cuda's promotion rules, and
 * numba-style signature strings ("void(float32[::1], float32)"). */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gj.h"

Type ty_unknown = {TY_UNKNOWN}, ty_bool = {TY_BOOL}, ty_int8 = {TY_INT8}, ty_int16 = {TY_INT16}, ty_int32 = {TY_INT32},
     ty_int64 = {TY_INT64}, ty_uint8 = {TY_UINT8}, ty_uint16 = {TY_UINT16}, ty_uint32 = {TY_UINT32},
     ty_uint64 = {TY_UINT64}, ty_float16 = {TY_FLOAT16}, ty_bfloat16 = {TY_BFLOAT16}, ty_fp8_e4m3 = {TY_FP8_E4M3}, ty_fp8_e5m2 = {TY_FP8_E5M2}, ty_float32 = {TY_FLOAT32}, ty_float64 = {TY_FLOAT64}, ty_none = {TY_NONE},
     ty_range = {TY_RANGE}, ty_rangeiter = {TY_RANGEITER}, ty_str = {TY_STR}, ty_complex64 = {TY_COMPLEX64},
     ty_complex128 = {TY_COMPLEX128}, ty_slice2 = {TY_SLICE, .n = 2}, ty_slice3 = {TY_SLICE, .n = 3},
     ty_ellipsis = {TY_ELLIPSIS};

/* clang-format off */
static Type *const scalars[] = {
    [TY_BOOL] = &ty_bool,       [TY_INT8] = &ty_int8,     [TY_INT16] = &ty_int16,
    [TY_INT32] = &ty_int32,     [TY_INT64] = &ty_int64,   [TY_UINT8] = &ty_uint8,
    [TY_UINT16] = &ty_uint16,   [TY_UINT32] = &ty_uint32, [TY_UINT64] = &ty_uint64,
    [TY_FLOAT16] = &ty_float16, [TY_BFLOAT16] = &ty_bfloat16, [TY_FP8_E4M3] = &ty_fp8_e4m3,
    [TY_FP8_E5M2] = &ty_fp8_e5m2, [TY_FLOAT32] = &ty_float32, [TY_FLOAT64] = &ty_float64, [TY_COMPLEX64] = &ty_complex64,
    [TY_COMPLEX128] = &ty_complex128,
};
/* clang-format on */

/* clang-format off */
static const char *const scalar_names[] = {
    [TY_BOOL] = "bool",       [TY_INT8] = "int8",       [TY_INT16] = "int16",
    [TY_INT32] = "int32",     [TY_INT64] = "int64",     [TY_UINT8] = "uint8",
    [TY_UINT16] = "uint16",   [TY_UINT32] = "uint32",   [TY_UINT64] = "uint64",
    [TY_FLOAT16] = "float16", [TY_BFLOAT16] = "bfloat16", [TY_FP8_E4M3] = "float8_e4m3fn",
    [TY_FP8_E5M2] = "float8_e5m2", [TY_FLOAT32] = "float32", [TY_FLOAT64] = "float64", [TY_COMPLEX64] = "complex64",
    [TY_COMPLEX128] = "complex128",
};
/* clang-format on */

Type *type_scalar(TypeKind k) { return k >= TY_BOOL && k <= TY_FP8_E5M2 ? scalars[k] : NULL; }

Type *type_array(Ctx *c, Type *elem, int ndim, char layout, AddrSpace space) {
    if (ndim > LIMIT_NDIM) { /* from a signature: point at the def line */
        error_limit(c, (Loc){c->firstlineno, 0}, "array dimensions", LIMIT_NDIM);
        return NULL;
    }
    Type *t = arena_alloc(&c->arena, sizeof *t);
    if (!t) return NULL;
    t->kind = TY_ARRAY;
    t->elem = elem;
    t->ndim = ndim;
    t->layout = layout;
    t->space = space;
    return t;
}

Type *type_cptr(Ctx *c, Type *elem, AddrSpace space) {
    Type *t = arena_alloc(&c->arena, sizeof *t);
    if (!t) return NULL;
    t->kind = TY_CPTR;
    t->elem = elem;
    t->space = space;
    return t;
}

Type *type_tuple(Ctx *c, int n, Type **items) {
    Type *t = arena_alloc(&c->arena, sizeof *t);
    if (!t) return NULL;
    t->kind = TY_TUPLE;
    t->n = n;
    t->items = arena_alloc(&c->arena, sizeof(Type *) * (size_t)(n ? n : 1));
    if (!t->items) return NULL;
    for (int i = 0; i < n; i++) {
        t->items[i] = items[i];
        bool tup = items[i]->kind == TY_TUPLE;
        if (tup && items[i]->depth > t->depth) t->depth = items[i]->depth;
        t->nested_items += 1 + (tup ? items[i]->nested_items : 0);
        if (t->nested_items > LIMIT_TUPLE) t->nested_items = LIMIT_TUPLE + 1;
    }
    t->depth++;
    return t;
}

Type *type_vector(Ctx *c, Type *base, int n) {
    Type *items[4] = {base, base, base, base};
    Type *t = type_tuple(c, n, items);
    if (t) t->path = arena_printf(&c->arena, "%sx%d", type_name(c, base), n);
    return t;
}

bool is_vector(const Type *t) { return t && t->kind == TY_TUPLE && t->path; }

Type *type_obj(Ctx *c, const char *path) {
    Type *t = arena_alloc(&c->arena, sizeof *t);
    if (!t) return NULL;
    t->kind = TY_OBJ;
    t->path = arena_strdup(&c->arena, path);
    return t;
}

Type *type_func(Ctx *c, const char *path, PyObject *func) {
    Type *t = type_obj(c, path);
    if (t) t->obj = func;
    return t;
}

bool type_eq(const Type *a, const Type *b) {
    if (a == b) return true;
    if (!a || !b || a->kind != b->kind) return false;
    switch (a->kind) {
    case TY_ARRAY:
        return a->ndim == b->ndim && a->layout == b->layout && a->space == b->space && type_eq(a->elem, b->elem) &&
               frag_eq(a->frag, b->frag);
    case TY_TUPLE:
        if (a->n != b->n || !a->names != !b->names) return false;
        if (a->names && strcmp(a->cls, b->cls)) return false;
        for (int i = 0; a->names && i < a->n; i++)
            if (strcmp(a->names[i], b->names[i])) return false;
        if ((a->path || b->path) != (a->path && b->path)) return false;
        if (a->path && strcmp(a->path, b->path)) return false;
        for (int i = 0; i < a->n; i++)
            if (!type_eq(a->items[i], b->items[i])) return false;
        return true;
    case TY_OBJ: return a->obj == b->obj && strcmp(a->path, b->path) == 0;
    case TY_SLICE: return a->n == b->n;
    case TY_RECORD: return a->size == b->size && strcmp(a->spelling, b->spelling) == 0;
    case TY_CPTR: return a->space == b->space && type_eq(a->elem, b->elem);
    default: return true;
    }
}

int tuple_field(const Type *t, const char *name) {
    for (int i = 0; t->names && i < t->n; i++)
        if (!strcmp(t->names[i], name)) return i;
    return -1;
}

const RecField *record_field(const Type *rec, const char *name) {
    for (int i = 0; i < rec->nfields; i++)
        if (!strcmp(rec->fields[i].name, name)) return &rec->fields[i];
    return NULL;
}

bool is_scalar(const Type *t) { return t && t->kind >= TY_BOOL && t->kind <= TY_BFLOAT16 && !is_complex(t); }
bool is_int(const Type *t) { return t && t->kind >= TY_INT8 && t->kind <= TY_UINT64; }
bool is_signed(const Type *t) { return t && t->kind >= TY_INT8 && t->kind <= TY_INT64; }
bool is_float(const Type *t) {
    return t && (t->kind == TY_FLOAT32 || t->kind == TY_FLOAT64 || t->kind == TY_FLOAT16 || t->kind == TY_BFLOAT16);
}
bool is_half(const Type *t) { return t && (t->kind == TY_FLOAT16 || t->kind == TY_BFLOAT16); }
bool is_fp8(const Type *t) { return t && (t->kind == TY_FP8_E4M3 || t->kind == TY_FP8_E5M2); }
bool is_numeric(const Type *t) { return is_scalar(t); }
bool is_index(const Type *t) { return is_int(t) || (t && t->kind == TY_BOOL); }
bool is_complex(const Type *t) { return t && (t->kind == TY_COMPLEX64 || t->kind == TY_COMPLEX128); }
bool is_number(const Type *t) { return is_scalar(t) || is_complex(t); }
bool has_value(const Type *t) {
    if (!t) return false;
    if (t->kind == TY_TUPLE) {
        for (int i = 0; i < t->n; i++)
            if (!has_value(t->items[i])) return false;
        return true;
    }
    return is_number(t) || is_fp8(t) || t->kind == TY_ARRAY || t->kind == TY_RANGE || t->kind == TY_RANGEITER ||
            t->kind == TY_RECORD || t->kind == TY_CPTR;
}
Type *complex_part(const Type *t) { return t->kind == TY_COMPLEX64 ? &ty_float32 : &ty_float64; }
Type *complex_of(const Type *t) {
    if (is_complex(t)) return (Type *)t;
    return t->kind == TY_FLOAT32 || is_half(t) ? &ty_complex64 : &ty_complex128;
}

int type_bits(const Type *t) {
    switch (t->kind) {
    case TY_BOOL:
    case TY_INT8:
    case TY_UINT8:
    case TY_FP8_E4M3:
    case TY_FP8_E5M2: return 8;
    case TY_INT16:
    case TY_UINT16:
    case TY_FLOAT16:
    case TY_BFLOAT16: return 16;
    case TY_INT32:
    case TY_UINT32:
    case TY_FLOAT32: return 32;
    case TY_COMPLEX128: return 128;
    case TY_RECORD: return (int)(t->size * 8);
    default: return 64;
    }
}

int type_align(const Type *t) {
    if (t->kind == TY_RECORD) return t->align;
    if (t->kind == TY_ARRAY && t->shape) return type_align(t->elem);
    return is_complex(t) ? type_bits(t) / 16 : type_bits(t) / 8;
}

int64_t type_size(const Type *t) {
    if (t->kind == TY_RECORD) return t->size;
    if (t->kind == TY_ARRAY && t->shape) {
        int64_t n = type_size(t->elem);
        for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
        return n;
    }
    return type_bits(t) / 8;
}

const char *type_name(Ctx *c, const Type *t) {
    if (!t) return "?";
    if (is_number(t) || is_fp8(t)) return scalar_names[t->kind];
    switch (t->kind) {
    case TY_UNKNOWN: return "<unknown>";
    case TY_NONE: return "none";
    case TY_RANGE: return "range_state64";
    case TY_RANGEITER: return "range_iter64";
    case TY_STR: return "unicode";
    case TY_SLICE: return t->n == 3 ? "slice<a:b:c>" : "slice<a:b>";
    case TY_ELLIPSIS: return "ellipsis";
    case TY_OBJ: return arena_printf(&c->arena, "Module/Function(%s)", t->path);
    case TY_RECORD: return t->spelling;
    case TY_CPTR: return arena_printf(&c->arena, "%s*", t->elem->kind == TY_NONE ? "void" : type_name(c, t->elem));
    case TY_ARRAY: {
        if (t->frag) return frag_name(c, t);
        if (t->shape) { /* a record's nested array, as numba spells it */
            const char *dims = "";
            for (int i = 0; i < t->ndim; i++)
                dims = arena_printf(&c->arena, "%s%s%lld", dims, i ? ", " : "", (long long)t->shape[i]);
            if (t->ndim == 1) dims = arena_printf(&c->arena, "%s,", dims);
            return arena_printf(&c->arena, "nestedarray(%s, (%s))", type_name(c, t->elem), dims);
        }
        const char *sp = t->space == AS_SHARED ? " shared" : t->space == AS_LOCAL ? " local" : "";
        if (t->ndim == 0) /* no subscript spelling has no dimensions: numba's printed form */
            return arena_printf(&c->arena, "array(%s, 0d, C)%s", type_name(c, t->elem), sp);
        const char *dims = "";
        for (int i = 0; i < t->ndim; i++) {
            bool last = i == t->ndim - 1;
            dims = arena_printf(&c->arena, "%s%s%s", dims, last && t->layout == 'C' ? "::1" : ":", last ? "" : ", ");
        }
        return arena_printf(&c->arena, "%s[%s]%s", type_name(c, t->elem), dims, sp);
    }
    case TY_TUPLE: {
        if (t->names) {
            char *s = arena_printf(&c->arena, "NamedTuple(%s", t->cls);
            for (int i = 0; i < t->n; i++)
                s = arena_printf(&c->arena, "%s, %s=%s", s, t->names[i], type_name(c, t->items[i]));
            return arena_printf(&c->arena, "%s)", s);
        }
        if (t->path) return t->path;
        bool uni = t->n > 0;
        for (int i = 1; i < t->n; i++) uni = uni && type_eq(t->items[i], t->items[0]);
        if (uni) return arena_printf(&c->arena, "UniTuple(%s x %d)", type_name(c, t->items[0]), t->n);
        char *s = "Tuple(";
        for (int i = 0; i < t->n; i++)
            s = arena_printf(&c->arena, "%s%s%s", s, i ? ", " : "", type_name(c, t->items[i]));
        return arena_printf(&c->arena, "%s)", s);
    }
    default: return "?";
    }
}

/* numba's names (numba.core.types, for a 64-bit Linux host: intp, int_, long_
 * and longlong are int64; float_ is float32) and a few NumPy spellings. */
Type *type_from_name(const char *name) {
    /* clang-format off */
    static const struct { const char *name; Type *t; } names[] = {
        {"bool", &ty_bool},         {"boolean", &ty_bool},       {"bool_", &ty_bool},
        {"b1", &ty_bool},           {"int8", &ty_int8},          {"i1", &ty_int8},
        {"char", &ty_int8},         {"int16", &ty_int16},        {"i2", &ty_int16},
        {"short", &ty_int16},       {"int32", &ty_int32},        {"i4", &ty_int32},
        {"intc", &ty_int32},        {"int64", &ty_int64},        {"i8", &ty_int64},
        {"intp", &ty_int64},        {"int_", &ty_int64},         {"long_", &ty_int64},
        {"longlong", &ty_int64},    {"uint8", &ty_uint8},        {"u1", &ty_uint8},
        {"byte", &ty_uint8},        {"uchar", &ty_uint8},        {"uint16", &ty_uint16},
        {"u2", &ty_uint16},         {"ushort", &ty_uint16},      {"uint32", &ty_uint32},
        {"u4", &ty_uint32},         {"uintc", &ty_uint32},       {"uint64", &ty_uint64},
        {"u8", &ty_uint64},         {"uintp", &ty_uint64},       {"uint", &ty_uint64},
        {"ulong", &ty_uint64},      {"ulonglong", &ty_uint64},   {"float32", &ty_float32},
        {"f4", &ty_float32},        {"float_", &ty_float32},     {"float", &ty_float32},
        {"single", &ty_float32},    {"float64", &ty_float64},    {"f8", &ty_float64},
        {"double", &ty_float64},    {"float16", &ty_float16},    {"f2", &ty_float16},
        {"half", &ty_float16},    {"bfloat16", &ty_bfloat16},
        {"float8_e4m3fn", &ty_fp8_e4m3}, {"float8_e5m2", &ty_fp8_e5m2},    {"none", &ty_none},          {"void", &ty_none},
        {"complex64", &ty_complex64}, {"c8", &ty_complex64},     {"csingle", &ty_complex64},
        {"complex128", &ty_complex128}, {"c16", &ty_complex128}, {"cdouble", &ty_complex128},
        {"complex_", &ty_complex128},
    };
    /* clang-format on */
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(names[i].name, name) == 0) return names[i].t;
    return NULL;
}

/* A 16-bit float (float16 or bfloat16) with itself or an 8-bit int stays
 * itself; with a 16-bit int, float32 or the other 16-bit float, float32;
 * wider ints need float64 (NumPy's result_type for float16; numba.cuda's
 * conversions of bfloat16, which converts safely only to float32 and up). */
static Type *promote_half(Type *a, Type *b) {
    Type *h = is_half(a) ? a : b, *other = h == a ? b : a;
    if (other->kind == h->kind) return h;
    if (other->kind == TY_FLOAT32 || is_half(other)) return &ty_float32;
    int bits = type_bits(other);
    return bits <= 8 ? h : bits <= 16 ? &ty_float32 : &ty_float64;
}

/* numba types integer arithmetic on machine integers (int64/uint64): small
 * ints widen to 64 bits; mixing int64 with uint64 gives float64, as NumPy. A
 * float with an int of up to 16 bits stays float32; wider ints need float64. */
Type *promote_arith(Type *a, Type *b) {
    if (is_complex(a) || is_complex(b)) {
        /* a complex with anything: the complex of the promoted parts
         * (float32 + complex64 -> complex64, int64 + complex64 -> complex128) */
        if (!is_number(a) || !is_number(b)) return NULL;
        Type *r = promote_arith(is_complex(a) ? complex_part(a) : a, is_complex(b) ? complex_part(b) : b);
        return complex_of(r);
    }
    if (!is_scalar(a) || !is_scalar(b)) return NULL;
    if (a->kind == TY_BOOL) a = &ty_int64;
    if (b->kind == TY_BOOL) b = &ty_int64;
    if (is_float(a) || is_float(b)) {
        if (a->kind == TY_FLOAT64 || b->kind == TY_FLOAT64) return &ty_float64;
        if (is_half(a) || is_half(b)) return promote_half(a, b);
        Type *other = is_float(a) && is_float(b) ? NULL : is_float(a) ? b : a;
        if (!other || type_bits(other) <= 16) return &ty_float32;
        return &ty_float64;
    }
    bool sa = is_signed(a), sb = is_signed(b);
    if (sa == sb) return sa ? &ty_int64 : &ty_uint64;
    Type *u = sa ? b : a;
    return type_bits(u) < 64 ? &ty_int64 : &ty_float64;
}

Type *unify(Ctx *c, Type *a, Type *b) {
    if (!a || a->kind == TY_UNKNOWN) return b;
    if (!b || b->kind == TY_UNKNOWN) return a;
    if (type_eq(a, b)) return a;
    if (is_scalar(a) && is_scalar(b)) {
        if (a->kind == TY_BOOL) return b;
        if (b->kind == TY_BOOL) return a;
        if (is_int(a) && is_int(b) && is_signed(a) == is_signed(b)) return type_bits(a) >= type_bits(b) ? a : b;
        return promote_arith(a, b);
    }
    if (is_number(a) && is_number(b)) return promote_arith(a, b); /* a complex */
    if (a->kind == TY_SLICE && b->kind == TY_SLICE) return &ty_slice3; /* one has a step */
    if (a->kind == TY_ARRAY && b->kind == TY_ARRAY && a->ndim == b->ndim && a->space == b->space &&
        type_eq(a->elem, b->elem))
        return type_array(c, a->elem, a->ndim, 'A', a->space);
    if (a->kind == TY_TUPLE && b->kind == TY_TUPLE && a->n == b->n) {
        Type **items = arena_alloc(&c->arena, sizeof(Type *) * (size_t)(a->n ? a->n : 1));
        if (!items) return NULL;
        for (int i = 0; i < a->n; i++) {
            items[i] = unify(c, a->items[i], b->items[i]);
            if (!items[i]) return NULL;
        }
        return type_tuple(c, a->n, items);
    }
    return NULL;
}

/* ---- signatures ----
 * One parser for every spelling of a signature: the compiler reads a kernel's
 * signature with it, and the launcher (through _core.parse_signature) reads
 * eager signatures and the arguments' types with it, so the two cannot disagree.
 * gpujit.types prints exactly these spellings.
 *
 *   sig   := [type] '(' [type (',' type)*] ')'   no return type: a kernel returns void
 *   type  := base ['[' dim (',' dim)* ']'] ['*']
 *   dim   := ':' | '::1'                          '::1' on the last dimension: C order
 *   base  := name                                 float32, f4, intc, ... (type_from_name)
 *          | 'UniTuple' '(' type ('x' | ',') int ')'
 *          | 'Tuple' '(' [type (',' type)*] ')'
 *          | 'array' '(' name ',' int 'd' ',' layout ')'          numba's printed form
 *          | 'Array' '(' name ',' int ',' quote layout quote ')'  numba's constructor
 *          | 'Record' '(' field (',' field)* ';' int ';' bool ')'  a structured dtype: size, aligned
 *          | 'NamedTuple' '(' name (',' name '=' type)* ')'      a namedtuple: its class, its fields
 *   field := name '[' 'type' '=' ftype ';' 'offset' '=' int ']'
 *   ftype := type | 'nestedarray' '(' type ',' '(' int (',' int)* [','] ')' ')'
 *   layout := 'C' | 'A' | 'F' */

enum { SIG_MAX_ARGS = 256, SIG_MAX_ITEMS = 64, SIG_MAX_DIMS = LIMIT_NDIM, SIG_MAX_DEPTH = 16 };

typedef struct {
    Ctx *c;
    const char *s;
    const char *p;
} Parser;

static void skip_ws(Parser *ps) {
    while (isspace((unsigned char)*ps->p)) ps->p++;
}

static bool accept(Parser *ps, char ch) {
    skip_ws(ps);
    if (*ps->p != ch) return false;
    ps->p++;
    return true;
}

static int sig_error(Parser *ps, const char *fmt, ...) {
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    PyErr_Format(PyExc_TypeError, "bad signature '%s': %s at column %d", ps->s, what, (int)(ps->p - ps->s) + 1);
    return -1;
}

#define SIG_FAIL(...) return (sig_error(ps, __VA_ARGS__), (Type *)NULL)

/* An identifier's length; its text in buf when it fits. */
static int ident(Parser *ps, char *buf, size_t size) {
    skip_ws(ps);
    int n = 0;
    while (isalnum((unsigned char)ps->p[n]) || ps->p[n] == '_') n++;
    if ((size_t)n < size) {
        memcpy(buf, ps->p, (size_t)n);
        buf[n] = 0;
    } else {
        buf[0] = 0;
    }
    return n;
}

static int parse_count(Parser *ps, int *out) {
    skip_ws(ps);
    if (!isdigit((unsigned char)*ps->p)) return sig_error(ps, "expected a number");
    long v = 0;
    while (isdigit((unsigned char)*ps->p) && v <= 1000000) v = v * 10 + (*ps->p++ - '0');
    *out = (int)v;
    return 0;
}

static Type *element_type(Parser *ps, Type *t) {
    if (!is_number(t) && !is_fp8(t) && t->kind != TY_RECORD) SIG_FAIL("arrays of %s are not supported (only of numbers)", type_name(ps->c, t));
    return t;
}

static Type *parse_type(Parser *ps, int depth);
static Type *parse_record(Parser *ps, int depth, const char *start);

/* items := [type (',' type)*] ')' -- the '(' already read */
static int parse_items(Parser *ps, int depth, Type **items, int limit, const char *what, int *n) {
    *n = 0;
    if (accept(ps, ')')) return 0;
    for (;;) {
        if (*n == limit) return sig_error(ps, "too many %s (limit is %d)", what, limit);
        Type *t = parse_type(ps, depth);
        if (!t) return -1;
        if (t->kind == TY_NONE) return sig_error(ps, "void cannot be one of the %s", what);
        items[(*n)++] = t;
        if (accept(ps, ',')) continue;
        if (accept(ps, ')')) return 0;
        return sig_error(ps, "expected ',' or ')'");
    }
}

/* "array(float32, 2d, C)" or "Array(float32, 2, 'C')": the '(' already read */
static Type *parse_array_call(Parser *ps, bool printed, int depth) {
    char name[32];
    int n = ident(ps, name, sizeof name);
    const char *at = ps->p;
    Type *elem = n && n < (int)sizeof name ? type_from_name(name) : NULL;
    if (!elem && n && !strncmp(at, "Record(", 7)) { /* a 0-d record array's element */
        ps->p += 7;
        elem = parse_record(ps, depth + 1, at);
        if (!elem) return NULL;
        n = 0;
    }
    if (!elem) SIG_FAIL(n ? "unknown type name '%.*s'" : "expected a type", n, ps->p);
    ps->p += n;
    if (!element_type(ps, elem)) return NULL;
    int ndim;
    if (!accept(ps, ',')) SIG_FAIL("expected ', ' and the number of dimensions");
    if (parse_count(ps, &ndim) < 0) return NULL;
    if (printed && *ps->p++ != 'd') SIG_FAIL("expected 'd' after the number of dimensions");
    if (ndim < 0 || ndim > SIG_MAX_DIMS) SIG_FAIL("arrays have 0 to %d dimensions, not %d", SIG_MAX_DIMS, ndim);
    if (!accept(ps, ',')) SIG_FAIL("expected ', ' and the layout");
    skip_ws(ps);
    char quote = printed ? 0 : *ps->p;
    if (!printed && quote != '\'' && quote != '"') SIG_FAIL("expected the layout, quoted: 'C', 'A' or 'F'");
    if (quote) ps->p++;
    char layout = *ps->p;
    if (layout != 'C' && layout != 'A' && layout != 'F') SIG_FAIL("expected the layout 'C', 'A' or 'F'");
    ps->p++;
    if (quote && *ps->p++ != quote) SIG_FAIL("expected the closing quote");
    if (!accept(ps, ')')) SIG_FAIL("expected ')'");
    /* F order (ndim > 1) compiles as any layout: the strides come with the array */
    return type_array(ps->c, elem, ndim, layout == 'C' || (layout == 'F' && ndim == 1) ? 'C' : 'A', AS_GLOBAL);
}

/* dims := dim (',' dim)* ']' -- the '[' already read */
static Type *parse_dims(Parser *ps, Type *elem) {
    if (!element_type(ps, elem)) return NULL;
    int ndim = 0, ncontig = 0, contig = -1;
    for (;;) {
        skip_ws(ps);
        if (strncmp(ps->p, "::1", 3) == 0) {
            ps->p += 3;
            ncontig++;
            contig = ndim;
        } else if (*ps->p == ':') {
            ps->p++;
        } else {
            SIG_FAIL("expected ':' or '::1'");
        }
        if (++ndim > SIG_MAX_DIMS) SIG_FAIL("too many dimensions (limit is %d)", SIG_MAX_DIMS);
        if (accept(ps, ',')) continue;
        if (accept(ps, ']')) break;
        SIG_FAIL("expected ',' or ']'");
    }
    bool f_order = ncontig == 1 && contig == 0 && ndim > 1;
    if (ncontig > 1 || (ncontig == 1 && contig != ndim - 1 && !f_order))
        SIG_FAIL("'::1' goes on the last dimension (C order) or the first (F order)");
    /* F order compiles as any layout: the strides come with the array */
    return type_array(ps->c, elem, ndim, ncontig && !f_order ? 'C' : 'A', AS_GLOBAL);
}

/* "nestedarray(uint8, (3, 2))": the '(' already read */
static Type *parse_nested_array(Parser *ps, int depth) {
    Type *elem = parse_type(ps, depth + 1);
    if (!elem) return NULL;
    if (!is_number(elem) && elem->kind != TY_RECORD) SIG_FAIL("a nested array holds numbers or records");
    if (!accept(ps, ',') || !accept(ps, '(')) SIG_FAIL("expected ', (' and the nested array's shape");
    int64_t *shape = arena_alloc(&ps->c->arena, sizeof(int64_t) * SIG_MAX_DIMS);
    if (!shape) return NULL;
    int ndim = 0;
    while (!accept(ps, ')')) {
        int n;
        if (ndim == SIG_MAX_DIMS) SIG_FAIL("too many dimensions (limit is %d)", SIG_MAX_DIMS);
        if (parse_count(ps, &n) < 0) return NULL;
        shape[ndim++] = n;
        if (!accept(ps, ',') && *ps->p != ')') SIG_FAIL("expected ',' or ')'");
    }
    if (!ndim || !accept(ps, ')')) SIG_FAIL("expected a shape and ')'");
    Type *t = type_array(ps->c, elem, ndim, 'C', AS_GENERIC);
    if (t) t->shape = shape;
    return t;
}

/* "Record(a[type=float64;offset=0],...;16;True)": `start` is at "Record",
 * the '(' already read. A field's type is a number, a record or a nested array. */
static Type *parse_record(Parser *ps, int depth, const char *start) {
    enum { MAX_FIELDS = 1024 };
    RecField *fields = arena_alloc(&ps->c->arena, sizeof(RecField) * MAX_FIELDS);
    if (!fields) return NULL;
    int n = 0, align = 1;
    do {
        char name[256], key[16];
        int len = ident(ps, name, sizeof name);
        if (!len || len >= (int)sizeof name) SIG_FAIL("expected a field name");
        ps->p += len;
        if (n == MAX_FIELDS) SIG_FAIL("too many record fields (limit is %d)", MAX_FIELDS);
        if (!accept(ps, '[')) SIG_FAIL("expected '[' after the field name");
        len = ident(ps, key, sizeof key);
        if (strcmp(key, "type") || (ps->p += len, !accept(ps, '='))) SIG_FAIL("expected 'type='");
        Type *ft;
        len = ident(ps, key, sizeof key);
        if (!strcmp(key, "nestedarray") && (ps->p += len, accept(ps, '(')))
            ft = parse_nested_array(ps, depth);
        else
            ft = parse_type(ps, depth + 1);
        if (!ft) return NULL;
        if (!is_number(ft) && ft->kind != TY_RECORD && !(ft->kind == TY_ARRAY && ft->shape))
            SIG_FAIL("a record field is a number, a record or a nested array, not %s", type_name(ps->c, ft));
        int off;
        if (!accept(ps, ';')) SIG_FAIL("expected ';'");
        len = ident(ps, key, sizeof key);
        if (strcmp(key, "offset") || (ps->p += len, !accept(ps, '='))) SIG_FAIL("expected 'offset='");
        if (parse_count(ps, &off) < 0) return NULL;
        if (!accept(ps, ']')) SIG_FAIL("expected ']'");
        fields[n++] = (RecField){arena_strdup(&ps->c->arena, name), ft, off};
        if (type_align(ft) > align) align = type_align(ft);
    } while (accept(ps, ','));
    int size;
    char flag[8];
    if (!accept(ps, ';') || parse_count(ps, &size) < 0) SIG_FAIL("expected ';' and the record's size");
    if (!accept(ps, ';')) SIG_FAIL("expected ';' and whether the record is aligned");
    int len = ident(ps, flag, sizeof flag);
    if (strcmp(flag, "True") && strcmp(flag, "False")) SIG_FAIL("expected True or False (aligned)");
    ps->p += len;
    if (!accept(ps, ')')) SIG_FAIL("expected ')'");
    for (int i = 0; i < n; i++)
        if (fields[i].offset + type_size(fields[i].type) > size)
            SIG_FAIL("field '%s' ends past the record's %d bytes", fields[i].name, size);
    Type *t = arena_alloc(&ps->c->arena, sizeof *t);
    if (!t) return NULL;
    t->kind = TY_RECORD;
    t->nfields = n;
    t->fields = fields;
    t->size = size;
    /* a packed record's elements lie at any byte: only an aligned one promises its fields' alignment */
    t->align = strcmp(flag, "True") ? 1 : align;
    t->spelling = arena_printf(&ps->c->arena, "%.*s", (int)(ps->p - start), start);
    return t;
}

/* "NamedTuple(Point, x=int64, y=float64)": the '(' already read */
static Type *parse_named_tuple(Parser *ps, int depth) {
    Type *items[SIG_MAX_ITEMS];
    const char *names[SIG_MAX_ITEMS];
    char name[256];
    int len = ident(ps, name, sizeof name), n = 0;
    if (!len || len >= (int)sizeof name) SIG_FAIL("expected the namedtuple's class name");
    ps->p += len;
    const char *cls = arena_strdup(&ps->c->arena, name);
    while (accept(ps, ',')) {
        if (n == SIG_MAX_ITEMS) SIG_FAIL("too many tuple items (limit is %d)", SIG_MAX_ITEMS);
        len = ident(ps, name, sizeof name);
        if (!len || len >= (int)sizeof name) SIG_FAIL("expected a field name");
        ps->p += len;
        if (!accept(ps, '=')) SIG_FAIL("expected '=' and the field's type");
        if (!(items[n] = parse_type(ps, depth + 1))) return NULL;
        if (items[n]->kind == TY_NONE) SIG_FAIL("a tuple item cannot be void");
        names[n++] = arena_strdup(&ps->c->arena, name);
    }
    if (!accept(ps, ')')) SIG_FAIL("expected ',' or ')'");
    Type *t = type_tuple(ps->c, n, items);
    if (!t) return NULL;
    t->cls = cls;
    t->names = arena_alloc(&ps->c->arena, sizeof(char *) * (size_t)(n + 1));
    if (!t->names) return NULL;
    memcpy(t->names, names, sizeof(char *) * (size_t)n);
    return t;
}

/* numba's CPointer: of a number (indexed as an array of them) or void (voidptr, only passed on) */
static Type *pointer_to(Parser *ps, Type *elem) {
    if (!is_number(elem) && elem->kind != TY_NONE) {
        ps->p--;
        SIG_FAIL("pointers are to numbers or void, not to %s", type_name(ps->c, elem));
    }
    return type_cptr(ps->c, elem, AS_GLOBAL);
}

static Type *parse_base(Parser *ps, int depth) {
    char name[32];
    int n = ident(ps, name, sizeof name);
    if (!n) SIG_FAIL("expected a type");
    const char *at = ps->p;
    ps->p += n;
    if (!strcmp(name, "UniTuple") && accept(ps, '(')) {
        Type *item = parse_type(ps, depth + 1);
        if (!item) return NULL;
        if (item->kind == TY_NONE) SIG_FAIL("a tuple item cannot be void");
        skip_ws(ps);
        if (*ps->p != 'x' && *ps->p != ',') SIG_FAIL("expected 'x' or ',' (UniTuple(type x count))");
        ps->p++;
        int count;
        if (parse_count(ps, &count) < 0) return NULL;
        if (count > SIG_MAX_ITEMS) SIG_FAIL("too many tuple items (limit is %d)", SIG_MAX_ITEMS);
        if (!accept(ps, ')')) SIG_FAIL("expected ')'");
        Type *items[SIG_MAX_ITEMS];
        for (int i = 0; i < count; i++) items[i] = item;
        return type_tuple(ps->c, count, items);
    }
    if (!strcmp(name, "Tuple") && accept(ps, '(')) {
        Type *items[SIG_MAX_ITEMS];
        int count;
        if (parse_items(ps, depth + 1, items, SIG_MAX_ITEMS, "tuple items", &count) < 0) return NULL;
        return type_tuple(ps->c, count, items);
    }
    if (!strcmp(name, "Record") && accept(ps, '(')) return parse_record(ps, depth, at);
    if (!strcmp(name, "NamedTuple") && accept(ps, '(')) return parse_named_tuple(ps, depth);
    if (!strcmp(name, "array") && accept(ps, '(')) return parse_array_call(ps, true, depth);
    if (!strcmp(name, "Array") && accept(ps, '(')) return parse_array_call(ps, false, depth);
    if (!strcmp(name, "CPointer") && accept(ps, '(')) {
        Type *elem = parse_type(ps, depth + 1);
        if (!elem) return NULL;
        if (!accept(ps, ')')) SIG_FAIL("expected ')'");
        return pointer_to(ps, elem);
    }
    Type *t = n < (int)sizeof name ? type_from_name(name) : NULL;
    if (!t) {
        ps->p = at;
        SIG_FAIL("unknown type name '%.*s'", n, at);
    }
    return t;
}

static Type *parse_type(Parser *ps, int depth) {
    if (depth > SIG_MAX_DEPTH) SIG_FAIL("types nested too deeply (limit is %d)", SIG_MAX_DEPTH);
    Type *t = parse_base(ps, depth);
    if (!t) return NULL;
    if (accept(ps, '[')) t = parse_dims(ps, t);
    while (t && accept(ps, '*')) t = pointer_to(ps, t);
    return t;
}

int sig_parse(Ctx *c, const char *sig, Type **ret, Type ***args, int *nargs) {
    Parser ps = {c, sig, sig};
    *ret = NULL;
    skip_ws(&ps);
    if (*ps.p != '(' && !(*ret = parse_type(&ps, 0))) return -1;
    if (!accept(&ps, '(')) return sig_error(&ps, "expected '('");
    Type *items[SIG_MAX_ARGS];
    int n;
    RETURN_IF_ERROR(parse_items(&ps, 0, items, SIG_MAX_ARGS, "arguments", &n));
    skip_ws(&ps);
    if (*ps.p) return sig_error(&ps, "trailing characters");
    *args = arena_alloc(&c->arena, sizeof(Type *) * (size_t)(n ? n : 1));
    if (!*args) return -1;
    memcpy(*args, items, sizeof(Type *) * (size_t)n);
    *nargs = n;
    return 0;
}

/* Can a kernel take an argument of type t (layout.c flattens it)? */
static bool kernel_arg_type(const Type *t) {
    if (t->kind == TY_TUPLE) {
        for (int k = 0; k < t->n; k++)
            if (!kernel_arg_type(t->items[k])) return false;
        return true;
    }
    return t->kind == TY_ARRAY || is_number(t) || is_fp8(t) || t->kind == TY_RECORD || t->kind == TY_CPTR;
}

int parse_signature(Ctx *c, const char *sig) {
    Type *ret, **args;
    int n;
    RETURN_IF_ERROR(sig_parse(c, sig, &ret, &args, &n));
    for (int i = 0; i < n; i++)
        if (!kernel_arg_type(args[i]))
            return PyErr_Format(PyExc_TypeError,
                                "bad signature '%s': argument %d is %s; a kernel takes arrays, numbers, records, "
                                "pointers and tuples of them",
                                sig, i + 1,
                                type_name(c, args[i])),
                   -1;
    c->restype = ret ? ret : &ty_none;
    c->declared_ret = ret;
    c->nargs = n;
    c->argtypes = args;
    return 0;
}
