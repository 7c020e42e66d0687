/* irops.h: every IR operation, one line each, in one list. Included by gj.h
 * (the IrOp enum) and by build.c and verify.c (names, properties) with IR_OP
 * defined to pick the columns they need, so an operation cannot be added to
 * one table and forgotten in another. No include guard: it is meant to be
 * expanded several times.
 *
 *   IR_OP(NAME, "spelling", nargs, flags)
 *
 * nargs: the operand count, or -1 when it varies (a call's arguments, a
 * tuple's items). flags: IRF_VALUE for an operation whose result is a value
 * other code uses (typeinfer gives it a type), IRF_TERM for a block's
 * terminator. The operands and fields each reads are noted beside it. */
IR_OP(CONST, "const", -1, IRF_VALUE) /* ckind: ival / fval / bval / name, or a constant tuple (args) */
IR_OP(ARG, "arg", 0, IRF_VALUE) /* ival = argument index */
IR_OP(LOAD_VAR, "load", 0, IRF_VALUE) /* var */
IR_OP(STORE_VAR, "store", 1, 0)         /* var <- args[0] */
IR_OP(OBJ, "obj", 0, IRF_VALUE) /* compile-time object: name = dotted path */
IR_OP(ATTR, "attr", 1, IRF_VALUE) /* args[0].name */
IR_OP(BINOP, "binop", 2, IRF_VALUE) /* ival = BinOp; args[0], args[1] */
IR_OP(UNARY, "unary", 1, IRF_VALUE) /* ival = UnOp; args[0] */
IR_OP(CMP, "cmp", 2, IRF_VALUE) /* ival = CmpOp; args[0], args[1] */
IR_OP(TRUTH, "truth", 1, IRF_VALUE) /* bool(args[0]) */
IR_OP(CALL, "call", -1, IRF_VALUE) /* args[0] callee, args[1..] positional then keyword args; kwnames */
IR_OP(GETITEM, "getitem", 2, IRF_VALUE) /* args[0][args[1]] */
IR_OP(SETITEM, "setitem", 3, 0)         /* args[0][args[1]] = args[2] */
IR_OP(SLICE, "slice", 3,
      IRF_VALUE) /* slice(args[0], args[1], args[2]); None for an omitted part; ival = 3 if a step was written, else 2 */
IR_OP(TUPLE, "tuple", -1, IRF_VALUE) /* (args...) */
IR_OP(TUPLE_GET, "tuple_get", 1, IRF_VALUE) /* args[0][ival] of an unpacking into nunpack variables */
IR_OP(GET_ITER, "get_iter", 1, IRF_VALUE) /* iterator over args[0] (a range) */
IR_OP(ITER_NEXT, "iter_next", 1, IRF_VALUE) /* advance args[0]; yields the value */
IR_OP(ITER_VALID, "iter_valid", 1, IRF_VALUE) /* args[0] = the IR_ITER_NEXT: true while not exhausted */
IR_OP(BR, "br", 0, IRF_TERM) /* target */
IR_OP(CONDBR, "condbr", 1, IRF_TERM) /* args[0] (bool) ? target : target2 */
IR_OP(RET, "ret", 0, IRF_TERM) /* kernels return None */
IR_OP(RET_VALUE, "ret_value", 1, IRF_TERM) /* device functions: args[0] */
IR_OP(RAISE, "raise", 0, IRF_TERM) /* ival = raise site (the root's c->raises); the thread stops */
