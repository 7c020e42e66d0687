"""Print the running CPython's opcode table as the C initialiser src/opcode_tables.h holds:
every real opcode (number below 256) that `opcode.opmap` names, with its number and its count
of inline cache code units. src/opcode_tables.h is this script's output for each supported
version; tests/test_pyversions.py checks the table against the interpreter that runs it.
    python3.X scripts/gen_opcode_table.py >> src/opcode_tables.h
"""
import opcode
import sys


def cache_count(name, number):
    entries = opcode._inline_cache_entries
    if isinstance(entries, list):        # 3.11, 3.12: a list by opcode
        return entries[number]
    return entries.get(name, 0)          # 3.13+: a mapping by name


def table():
    return sorted((number, name, cache_count(name, number))
                  for name, number in opcode.opmap.items() if number < 256)


def main():
    tag = "%d%d" % sys.version_info[:2]
    print("/* CPython %d.%d (opcode.opmap, opcode._inline_cache_entries) */" % sys.version_info[:2])
    print("static const OpDef opcodes_%s[] = {" % tag)
    line = "   "
    for number, name, caches in table():
        item = ' {"%s", %d, %d},' % (name, number, caches)
        if len(line) + len(item) > 110:
            print(line)
            line = "   "
        line += item
    print(line)
    print("};")


if __name__ == "__main__":
    main()
