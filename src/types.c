/* types.c: the type lattice of kernels, numba.cuda's promotion rules, and
 * numba-style signature strings ("void(float32[::1], float32)"). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "gj.h"

Type ty_unknown = {TY_UNKNOWN}, ty_bool = {TY_BOOL}, ty_int8 = {TY_INT8}, ty_int16 = {TY_INT16},
     ty_int32 = {TY_INT32}, ty_int64 = {TY_INT64}, ty_uint8 = {TY_UINT8}, ty_uint16 = {TY_UINT16},
     ty_uint32 = {TY_UINT32}, ty_uint64 = {TY_UINT64}, ty_float32 = {TY_FLOAT32},
     ty_float64 = {TY_FLOAT64}, ty_none = {TY_NONE}, ty_range = {TY_RANGE},
     ty_rangeiter = {TY_RANGEITER}, ty_str = {TY_STR}, ty_complex64 = {TY_COMPLEX64},
     ty_complex128 = {TY_COMPLEX128}, ty_slice2 = {TY_SLICE, .n = 2}, ty_slice3 = {TY_SLICE, .n = 3},
     ty_ellipsis = {TY_ELLIPSIS};

static Type *const scalars[] = {
    [TY_BOOL] = &ty_bool,       [TY_INT8] = &ty_int8,     [TY_INT16] = &ty_int16,
    [TY_INT32] = &ty_int32,     [TY_INT64] = &ty_int64,   [TY_UINT8] = &ty_uint8,
    [TY_UINT16] = &ty_uint16,   [TY_UINT32] = &ty_uint32, [TY_UINT64] = &ty_uint64,
    [TY_FLOAT32] = &ty_float32, [TY_FLOAT64] = &ty_float64, [TY_COMPLEX64] = &ty_complex64,
    [TY_COMPLEX128] = &ty_complex128,
};

static const char *const scalar_names[] = {
    [TY_BOOL] = "bool",       [TY_INT8] = "int8",       [TY_INT16] = "int16",
    [TY_INT32] = "int32",     [TY_INT64] = "int64",     [TY_UINT8] = "uint8",
    [TY_UINT16] = "uint16",   [TY_UINT32] = "uint32",   [TY_UINT64] = "uint64",
    [TY_FLOAT32] = "float32", [TY_FLOAT64] = "float64", [TY_COMPLEX64] = "complex64",
    [TY_COMPLEX128] = "complex128",
};

Type *type_scalar(TypeKind k) { return k >= TY_BOOL && k <= TY_COMPLEX128 ? scalars[k] : NULL; }

Type *type_array(Ctx *c, Type *elem, int ndim, char layout, AddrSpace space) {
    Type *t = arena_alloc(&c->arena, sizeof *t);
    if (!t) return NULL;
    t->kind = TY_ARRAY;
    t->elem = elem;
    t->ndim = ndim;
    t->layout = layout;
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
    for (int i = 0; i < n; i++) t->items[i] = items[i];
    return t;
}

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
        return a->ndim == b->ndim && a->layout == b->layout && a->space == b->space &&
               type_eq(a->elem, b->elem);
    case TY_TUPLE:
        if (a->n != b->n) return false;
        for (int i = 0; i < a->n; i++)
            if (!type_eq(a->items[i], b->items[i])) return false;
        return true;
    case TY_OBJ: return a->obj == b->obj && strcmp(a->path, b->path) == 0;
    case TY_SLICE: return a->n == b->n;
    default: return true;
    }
}

bool is_scalar(const Type *t) { return t && t->kind >= TY_BOOL && t->kind <= TY_FLOAT64; }
bool is_int(const Type *t) { return t && t->kind >= TY_INT8 && t->kind <= TY_UINT64; }
bool is_signed(const Type *t) { return t && t->kind >= TY_INT8 && t->kind <= TY_INT64; }
bool is_float(const Type *t) { return t && (t->kind == TY_FLOAT32 || t->kind == TY_FLOAT64); }
bool is_numeric(const Type *t) { return is_scalar(t); }
bool is_index(const Type *t) { return is_int(t) || (t && t->kind == TY_BOOL); }
bool is_complex(const Type *t) { return t && (t->kind == TY_COMPLEX64 || t->kind == TY_COMPLEX128); }
bool is_number(const Type *t) { return is_scalar(t) || is_complex(t); }
Type *complex_part(const Type *t) { return t->kind == TY_COMPLEX64 ? &ty_float32 : &ty_float64; }
Type *complex_of(const Type *t) {
    if (is_complex(t)) return (Type *)t;
    return t->kind == TY_FLOAT32 ? &ty_complex64 : &ty_complex128;
}

int type_bits(const Type *t) {
    switch (t->kind) {
    case TY_BOOL: case TY_INT8: case TY_UINT8: return 8;
    case TY_INT16: case TY_UINT16: return 16;
    case TY_INT32: case TY_UINT32: case TY_FLOAT32: return 32;
    case TY_COMPLEX128: return 128;
    default: return 64;
    }
}

int type_align(const Type *t) { return is_complex(t) ? type_bits(t) / 16 : type_bits(t) / 8; }

const char *type_name(Ctx *c, const Type *t) {
    if (!t) return "?";
    if (is_number(t)) return scalar_names[t->kind];
    switch (t->kind) {
    case TY_UNKNOWN: return "<unknown>";
    case TY_NONE: return "none";
    case TY_RANGE: return "range_state64";
    case TY_RANGEITER: return "range_iter64";
    case TY_STR: return "unicode";
    case TY_SLICE: return t->n == 3 ? "slice<a:b:c>" : "slice<a:b>";
    case TY_ELLIPSIS: return "ellipsis";
    case TY_OBJ: return arena_printf(&c->arena, "Module/Function(%s)", t->path);
    case TY_ARRAY: {
        char dims[64] = "";
        for (int i = 0; i < t->ndim; i++) {
            bool last = i == t->ndim - 1;
            strcat(dims, last && t->layout == 'C' ? "::1" : ":");
            if (!last) strcat(dims, ", ");
        }
        const char *sp = t->space == AS_SHARED ? " shared" : t->space == AS_LOCAL ? " local" : "";
        return arena_printf(&c->arena, "%s[%s]%s", type_name(c, t->elem), dims, sp);
    }
    case TY_TUPLE: {
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

Type *type_from_name(const char *name) {
    static const struct { const char *name; Type *t; } names[] = {
        {"bool", &ty_bool},       {"boolean", &ty_bool},    {"bool_", &ty_bool},
        {"b1", &ty_bool},         {"int8", &ty_int8},       {"i1", &ty_int8},
        {"int16", &ty_int16},     {"i2", &ty_int16},        {"int32", &ty_int32},
        {"i4", &ty_int32},        {"intc", &ty_int32},      {"int64", &ty_int64},
        {"i8", &ty_int64},        {"intp", &ty_int64},      {"int_", &ty_int64},
        {"uint8", &ty_uint8},     {"u1", &ty_uint8},        {"byte", &ty_uint8},
        {"uint16", &ty_uint16},   {"u2", &ty_uint16},       {"uint32", &ty_uint32},
        {"u4", &ty_uint32},       {"uintc", &ty_uint32},    {"uint64", &ty_uint64},
        {"u8", &ty_uint64},       {"uintp", &ty_uint64},    {"float32", &ty_float32},
        {"f4", &ty_float32},      {"float", &ty_float32},   {"single", &ty_float32},
        {"float64", &ty_float64}, {"f8", &ty_float64},      {"double", &ty_float64},
        {"float_", &ty_float64},  {"none", &ty_none},       {"void", &ty_none},
        {"complex64", &ty_complex64}, {"c8", &ty_complex64}, {"csingle", &ty_complex64},
        {"complex128", &ty_complex128}, {"c16", &ty_complex128}, {"cdouble", &ty_complex128},
        {"complex_", &ty_complex128},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(names[i].name, name) == 0) return names[i].t;
    return NULL;
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
        if (is_int(a) && is_int(b) && is_signed(a) == is_signed(b))
            return type_bits(a) >= type_bits(b) ? a : b;
        return promote_arith(a, b);
    }
    if (is_number(a) && is_number(b)) return promote_arith(a, b); /* a complex */
    if (a->kind == TY_SLICE && b->kind == TY_SLICE) return &ty_slice3; /* one has a step */
    if (a->kind == TY_ARRAY && b->kind == TY_ARRAY && a->ndim == b->ndim && a->space == b->space &&
        type_eq(a->elem, b->elem))
        return type_array(c, a->elem, a->ndim, 'A', a->space);
    if (a->kind == TY_TUPLE && b->kind == TY_TUPLE && a->n == b->n) {
        Type *items[64];
        if (a->n > 64) return NULL;
        for (int i = 0; i < a->n; i++) {
            items[i] = unify(c, a->items[i], b->items[i]);
            if (!items[i]) return NULL;
        }
        return type_tuple(c, a->n, items);
    }
    return NULL;
}

/* ---- signatures: "void(float32[::1], float32[:, :], int64)" ---- */

typedef struct { Ctx *c; const char *s; const char *p; } Parser;

static void skip_ws(Parser *ps) { while (isspace((unsigned char)*ps->p)) ps->p++; }

static int sig_error(Parser *ps, const char *what) {
    PyErr_Format(PyExc_TypeError, "bad signature '%s': %s at column %d", ps->s, what,
                 (int)(ps->p - ps->s));
    return -1;
}

/* type := name ['[' dims ']'] ; dims := dim (',' dim)* ; dim := ':' | '::1' */
static Type *parse_type(Parser *ps) {
    skip_ws(ps);
    char name[32];
    int n = 0;
    while ((isalnum((unsigned char)*ps->p) || *ps->p == '_') && n < 31) name[n++] = *ps->p++;
    name[n] = 0;
    Type *t = type_from_name(name);
    if (!t) {
        sig_error(ps, n ? "unknown type name" : "expected a type");
        return NULL;
    }
    skip_ws(ps);
    if (*ps->p != '[') return t;
    if (!is_number(t)) {
        sig_error(ps, "arrays of this type are not supported");
        return NULL;
    }
    ps->p++;
    int ndim = 0;
    char layout = 'A';
    for (;;) {
        skip_ws(ps);
        if (strncmp(ps->p, "::1", 3) == 0) {
            ps->p += 3;
            layout = 'C';
        } else if (*ps->p == ':') {
            ps->p++;
            if (layout == 'C') layout = 'X'; /* a contiguous dim must be the last */
        } else {
            sig_error(ps, "expected ':' or '::1'");
            return NULL;
        }
        ndim++;
        skip_ws(ps);
        if (*ps->p == ',') { ps->p++; continue; }
        if (*ps->p == ']') { ps->p++; break; }
        sig_error(ps, "expected ',' or ']'");
        return NULL;
    }
    if (layout == 'X') {
        sig_error(ps, "only the last dimension may be '::1' (C order)");
        return NULL;
    }
    return type_array(ps->c, t, ndim, layout, AS_GLOBAL);
}

int parse_signature(Ctx *c, const char *sig) {
    Parser ps = {c, sig, sig};
    Type *ret = parse_type(&ps);
    if (!ret) return -1;
    skip_ws(&ps);
    if (*ps.p != '(') return sig_error(&ps, "expected '('");
    ps.p++;
    Type *args[256];
    int n = 0;
    skip_ws(&ps);
    if (*ps.p == ')') {
        ps.p++;
    } else {
        for (;;) {
            if (n == 256) return sig_error(&ps, "too many arguments");
            Type *t = parse_type(&ps);
            if (!t) return -1;
            if (t->kind == TY_NONE) return sig_error(&ps, "an argument cannot be void");
            args[n++] = t;
            skip_ws(&ps);
            if (*ps.p == ',') { ps.p++; continue; }
            if (*ps.p == ')') { ps.p++; break; }
            return sig_error(&ps, "expected ',' or ')'");
        }
    }
    skip_ws(&ps);
    if (*ps.p) return sig_error(&ps, "trailing characters");
    c->restype = ret;
    c->nargs = n;
    c->argtypes = arena_alloc(&c->arena, sizeof(Type *) * (size_t)(n ? n : 1));
    if (!c->argtypes) return -1;
    memcpy(c->argtypes, args, sizeof(Type *) * (size_t)n);
    return 0;
}
