"""docs/language.md's "What raises" says what the compiler does: each kernel of the section's
block, compiled with its line numbers on the page, raises the error its comment names, with a
message that contains the comment's text and names a line of that kernel."""
import os
import re

import pytest

import gpujit as gpu

PAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "language.md")
EXPECT = re.compile(r"^# (UnsupportedError|TypingError): (.+)$")


def _section_block():
    """(first line number on the page, the lines) of the ```python block of "## What raises"."""
    with open(PAGE, encoding="utf-8") as f:
        lines = f.read().split("\n")
    head = lines.index("## What raises")
    start = next(i for i in range(head, len(lines)) if lines[i] == "```python") + 1
    end = next(i for i in range(start, len(lines)) if lines[i] == "```")
    return start + 1, lines[start:end]


def _cases():
    first, lines = _section_block()
    setup, cases = [], []
    for n, line in enumerate(lines):
        m = EXPECT.match(line)
        if m:
            cases.append([first + n, m.group(1), m.group(2), []])
        (cases[-1][3] if cases else setup).append(line)
    return "\n" * (first - 1) + "\n".join(setup), cases  # the page's line numbers


SETUP, CASES = _cases()


def test_the_section_has_examples_of_both_errors():
    assert {c[1] for c in CASES} == {"UnsupportedError", "TypingError"}
    assert len(CASES) >= 30


@pytest.mark.parametrize("line,error,message,body", CASES, ids=["%s:%d" % (c[1], c[0]) for c in CASES])
def test_what_raises_example(line, error, message, body):
    ns = {}
    exec(compile(SETUP, PAGE, "exec"), ns)
    code = "\n" * (line - 1) + "\n".join(body)  # the page's line numbers
    with pytest.raises(getattr(gpu, error)) as info:
        exec(compile(code, PAGE, "exec"), ns)
    text = str(info.value)
    assert message in text, text
    where = re.search(r"language\.md:(\d+)", text)
    assert where and line < int(where.group(1)) < line + len(body), text
