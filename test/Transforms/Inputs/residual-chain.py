#!/usr/bin/env python3
# ===- residual-chain.py - a deep, tiny residual model for scale tests -----=== #
#
# Writes a function of N blocks, each `h = h + f(h)` where f holds one or two
# 16x32x32 GEMMs with a {nvfp4.weight} of its own, cheap enough to parse and
# print at 10,000 blocks (about 3 MB). The residual add cycles through the
# three forms nvfp4-assign-precision recognizes (arith.addf, linalg.add, an
# adding linalg.generic) and some blocks put an element-wise op or a second
# GEMM between the hidden state and the add, so that each block's data-flow
# window differs.
#
#   residual-chain.py N [--no-layers] [--head]
#                                       the model (nvfp4.layer on every GEMM
#                                       unless --no-layers; --head adds an
#                                       output head GEMM without a layer)
#   residual-chain.py N --expect F L    what nvfp4-assign-precision with
#                                       keep-first=F keep-last=L writes on
#                                       every GEMM, in order, one line each:
#                                       nvfp4.layer = B : i64, nvfp4.precision = "P"
#
# ===-----------------------------------------------------------------------=== #

import sys

T = "tensor<16x32xbf16>"
W = "tensor<32x32xbf16>"


def gemms_of(block):
    """Number of GEMMs in `block`: every seventh has two."""
    return 2 if block % 7 == 3 else 1


def model(n, layers, head):
    args = ["%h0: " + T]
    body = []
    body.append("  %init = tensor.empty() : " + T)
    for b in range(n):
        attr = " {nvfp4.layer = %d : i64}" % b if layers else ""
        x = "%%h%d" % b
        if b % 5 == 1:
            # An element-wise op before the first GEMM.
            body.append("  %%n%d = arith.negf %s : %s" % (b, x, T))
            x = "%%n%d" % b
        for g in range(gemms_of(b)):
            args.append("%%w%d_%d: %s {nvfp4.weight}" % (b, g, W))
            body.append(
                "  %%m%d_%d = linalg.matmul indexing_maps = [#x, #w, #y]%s "
                "ins(%s, %%w%d_%d : %s, %s) outs(%%init : %s) -> %s"
                % (b, g, attr, x, b, g, T, W, T, T))
            x = "%%m%d_%d" % (b, g)
        h, nxt = "%%h%d" % b, "%%h%d" % (b + 1)
        form = b % 3
        if form == 0:
            body.append("  %s = arith.addf %s, %s : %s" % (nxt, h, x, T))
        elif form == 1:
            body.append("  %s = linalg.add ins(%s, %s : %s, %s) outs(%%init : %s) -> %s"
                        % (nxt, x, h, T, T, T, T))
        else:
            body.append(
                "  %s = linalg.generic {indexing_maps = [#i, #i, #i], "
                "iterator_types = [\"parallel\", \"parallel\"]} "
                "ins(%s, %s : %s, %s) outs(%%init : %s) {\n"
                "  ^bb0(%%a: bf16, %%c: bf16, %%o: bf16):\n"
                "    %%s = arith.addf %%a, %%c : bf16\n"
                "    linalg.yield %%s : bf16\n"
                "  } -> %s" % (nxt, h, x, T, T, T, T))
    result = "%%h%d" % n
    if head:
        args.append("%%w_head: %s {nvfp4.weight}" % W)
        body.append(
            "  %%logits = linalg.matmul indexing_maps = [#x, #w, #y] "
            "{nvfp4.kind = \"head\"} ins(%s, %%w_head : %s, %s) "
            "outs(%%init : %s) -> %s" % (result, T, W, T, T))
        result = "%logits"
    body.append("  return %s : %s" % (result, T))
    out = [
        "#x = affine_map<(m, n, k) -> (m, k)>",
        "#w = affine_map<(m, n, k) -> (n, k)>",
        "#y = affine_map<(m, n, k) -> (m, n)>",
        "#i = affine_map<(m, n) -> (m, n)>",
        "func.func @chain(" + ", ".join(args) + ") -> " + T + " {",
    ]
    out += body
    out.append("}")
    return "\n".join(out) + "\n"


def expect(n, first, last):
    lines = []
    for b in range(n):
        precision = "bf16" if b < first or b >= n - last else "nvfp4"
        for _ in range(gemms_of(b)):
            lines.append('nvfp4.layer = %d : i64, nvfp4.precision = "%s"'
                         % (b, precision))
    return "\n".join(lines) + "\n"


def main():
    argv = sys.argv[1:]
    n = int(argv[0])
    if len(argv) >= 2 and argv[1] == "--expect":
        sys.stdout.write(expect(n, int(argv[2]), int(argv[3])))
    else:
        sys.stdout.write(model(n, "--no-layers" not in argv, "--head" in argv))


if __name__ == "__main__":
    main()
