#!/usr/bin/env python3
# ===- run-doc-commands.py - run the shell commands of the docs --------=== #
#
# Extracts every ```sh / ```bash block of README.md and docs/*.md (not the
# generated docs) and runs its commands, one bash session per document, in a
# scratch directory that links the source tree's folders and the build
# directory as `build/`. A command is skipped only when a rule below says
# why (it needs the GPU, it is the test suite itself, or it builds another
# tree for minutes); every other command must exit 0. Prints one line per
# command and ends with "N run, N skipped"; exit status 1 on any failure.
#
#   run-doc-commands.py SRC_ROOT OBJ_ROOT SCRATCH
#
# ===-----------------------------------------------------------------===== #

import os
import re
import shutil
import subprocess
import sys

# (pattern, reason): a command matching the pattern is not run.
# Leading environment assignments (`JOBS=1 `, `LIT_ARGS="--filter X" `).
ENV = r"""^(\w+=("[^"]*"|'[^']*'|\S*)\s+)*"""

SKIPS = [
    (ENV + r"bash scripts/(demo|test|setup)\.sh",
     "builds and runs the whole suite (this test is part of it)"),
    (ENV + r"bash scripts/(sanitize|fuzz|resource-limits)\.sh",
     "builds another tree and runs for minutes to hours (docs/Testing.md)"),
    (r"^cmake -G Ninja -S \. -B build-",
     "configures another build tree (what scripts/sanitize.sh does)"),
    (ENV + r"build-fuzz/", "needs the fuzzing build (scripts/fuzz.sh)"),
    (ENV + r"bash integration_test/run_\w+\.sh",
     "needs the GPU machine (or writes its cases for it: minutes of CPU "
     "reference)"),
    (r"^nvfp4-run (?!--manifest=\S+ --describe)", "needs a CUDA GPU"),
    (r"^python3 bench/", "needs a CUDA GPU"),
]


# (text, replacement): paths outside the tree a command would write to.
REWRITES = [("--prefix /opt/nvfp4", "--prefix install-prefix")]


def blocks(path):
    text = open(path, encoding="utf-8").read()
    for match in re.finditer(r"^```(?:sh|bash)\n(.*?)^```", text, re.S | re.M):
        yield match.group(1)


def commands(block):
    """The commands of a block: backslash continuations joined, comment
    lines dropped."""
    pending = ""
    for line in block.splitlines():
        if pending:
            pending += "\n" + line
        elif not line.strip() or line.lstrip().startswith("#"):
            continue
        else:
            pending = line
        if pending.endswith("\\"):
            continue
        yield pending
        pending = ""
    if pending:
        yield pending


def skip_reason(command):
    for pattern, reason in SKIPS:
        if re.search(pattern, command):
            return reason
    return None


def main():
    src, obj, scratch = sys.argv[1:4]
    documents = [os.path.join(src, "README.md")]
    docs = os.path.join(src, "docs")
    for root, dirs, files in os.walk(docs):
        dirs[:] = [d for d in dirs if d != "generated"]
        documents += [os.path.join(root, f) for f in sorted(files)
                      if f.endswith(".md")]
    env = dict(os.environ)
    env["PATH"] = os.path.join(obj, "bin") + os.pathsep + env.get("PATH", "")
    run = skipped = failed = 0
    for document in documents:
        name = os.path.relpath(document, src)
        work = os.path.join(scratch, name.replace("/", "_"))
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        for entry in os.listdir(src):
            if entry not in ("build", ".git") and not entry.startswith("build"):
                os.symlink(os.path.join(src, entry), os.path.join(work, entry))
        os.symlink(obj, os.path.join(work, "build"))
        for block in blocks(document):
            for command in commands(block):
                first = command.splitlines()[0]
                reason = skip_reason(command)
                if reason:
                    skipped += 1
                    print("SKIP %s: %s  (%s)" % (name, first, reason))
                    continue
                run += 1
                for text, replacement in REWRITES:
                    command = command.replace(text, replacement)
                result = subprocess.run(
                    ["bash", "-e", "-o", "pipefail", "-c", command], cwd=work,
                    env=env, stdin=subprocess.DEVNULL, capture_output=True,
                    text=True, timeout=600)
                if result.returncode == 0:
                    print("OK   %s: %s" % (name, first))
                    continue
                failed += 1
                print("FAIL %s: %s (exit %d)\n%s%s" % (
                    name, first, result.returncode, result.stdout[-2000:],
                    result.stderr[-2000:]))
    print("%d run, %d skipped, %d failed" % (run, skipped, failed))
    return 1 if failed or not run else 0


if __name__ == "__main__":
    sys.exit(main())
