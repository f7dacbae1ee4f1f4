#!/usr/bin/env python3
# ===- check-snippets.py - doc code blocks are copies of built files ---=== #
#
#   check-snippets.py SRC_ROOT DOC.md...
#
# A code block preceded by `<!-- snippet: PATH#NAME -->` must equal the
# lines of PATH (relative to SRC_ROOT) between the marker lines
# `snippet: NAME` and `end snippet: NAME` (comments in that file's
# language), with their common indentation removed. Prints one line per
# block and exits 1 on a mismatch, on a missing file or marker, and when a
# document has no snippet at all.
#
# ===-----------------------------------------------------------------===== #

import difflib
import os
import re
import sys
import textwrap

BLOCK = re.compile(r"^<!-- snippet: (\S+)#(\S+) -->\n```\w*\n(.*?)^```", re.S | re.M)


def region(path, name):
    lines = open(path, encoding="utf-8").read().splitlines(keepends=True)
    tail = r"(\s*\*/)?\s*$"
    begin = [i for i, l in enumerate(lines)
             if re.search(r"(?<!end )snippet: %s%s" % (re.escape(name), tail), l)]
    end = [i for i, l in enumerate(lines)
           if re.search(r"end snippet: %s%s" % (re.escape(name), tail), l)]
    if len(begin) != 1 or len(end) != 1 or end[0] <= begin[0]:
        return None
    return textwrap.dedent("".join(lines[begin[0] + 1:end[0]]))


def main():
    src = sys.argv[1]
    failed = 0
    for doc in sys.argv[2:]:
        text = open(doc, encoding="utf-8").read()
        name = os.path.relpath(doc, src)
        found = 0
        for match in BLOCK.finditer(text):
            found += 1
            path, snippet, body = match.groups()
            expected = region(os.path.join(src, path), snippet)
            if expected is None:
                failed += 1
                print("FAIL %s: no region '%s' in %s" % (name, snippet, path))
            elif expected != body:
                failed += 1
                print("FAIL %s: %s#%s differs from the file:" % (name, path, snippet))
                sys.stdout.writelines(difflib.unified_diff(
                    expected.splitlines(True), body.splitlines(True), path, name))
            else:
                print("OK   %s: %s#%s" % (name, path, snippet))
        if not found:
            failed += 1
            print("FAIL %s: no snippet blocks" % name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
