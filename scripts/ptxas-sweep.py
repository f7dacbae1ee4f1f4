#!/usr/bin/env python3
"""ptxas statistics of the Blackwell GEMM schedules over a grid of shapes.

For every chip and schedule (the rule's choice, `rule`, or one forced with
--gemm-schedule) this compiles one module of GEMMs, M x N x K in
{256, 1600, 4096, 8192} x {272, 2000, 2176, 4096, 8192} x {768, 1536},
BF16 and FP32 C, linear and swizzled B scales (160 kernels), with
nvfp4-compile --emit=ptx, assembles it with `ptxas -v` and prints one line
per schedule: kernels, kernels that spill, registers (min-max) and the SASS
instructions of all kernels (from the cubin's .text sections, as
sass_stats.py reads them). Spilling kernels are listed under their line;
the exit status is 1 if any kernel spilled. docs/Blackwell.md section 8
quotes its output; test/Target/tcgen05-gemm-spills.test runs a subset.

With --bf16 the grid is BF16 linalg.matmul instead (kept in BF16 by their
nvfp4.precision): the same M x N, K in {72, 768, 1536}, BF16 and FP32 C, B
stored [n, k] and [k, n] (240 GEMMs), through each chip's BF16 GEMM
(tcgen05 .kind::f16 on sm_100a/sm_103a, mma.sync .bf16 on sm_120a;
docs/Blackwell.md section 12) with the rule's schedule; only the GEMM
kernels are counted (not the transposes of [k, n] operands).

usage: ptxas-sweep.py [--build DIR] [--ptxas PATH] [--chips sm_100a,sm_103a]
                      [--schedules rule,128x128x256_s4,...] [--small]
                      [--bf16] [--keep DIR]
  --small   the 8 shapes of test/Target/Inputs/gemm-spill-shapes.mlir only
  --bf16    the BF16 GEMM grid (default chips sm_100a,sm_103a,sm_120a)
  --keep    write the PTX, cubins and ptxas logs to DIR
"""
import argparse
import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sass_stats  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

BOTH = ['rule', '128x128x256_s4', '128x128x256_s4_ts', '128x128x256_s4_p8',
        '128x128x256_s4_p8_ts', '128x256x256_s5_p8_c2_cg2',
        '128x256x256_s5_p8_c2_cg2_ts']
SM103 = ['128x128x256_s6_mk96', '128x128x256_s6_mk96_ts',
         '128x128x256_s6_p8_mk96', '128x128x256_s3_mk96',
         '128x128x256_s3_mk96_ts', '128x128x256_s3_p8_mk96',
         '128x128x256_s3_p8_mk96_ts']


def gemm(m, n, k, out, swizzled):
    a = f'!nvfp4.tensor<{m}x{k}xf4E2M1FN, scale = f8E4M3FN, block = 1x16>'
    layout = ', layout = swizzled_128x4' if swizzled else ''
    b = (f'!nvfp4.tensor<{n}x{k}xf4E2M1FN, scale = f8E4M3FN, '
         f'block = 16x16{layout}>')
    c = f'tensor<{m}x{n}x{out}>'
    name = f'g{m}x{n}x{k}_{out}_{"swizzled" if swizzled else "linear"}'
    return (f'func.func @{name}(%a: {a}, %b: {b}) -> {c} {{\n'
            f'  %y = nvfp4.scaled_matmul %a, %b : {a}, {b} -> {c}\n'
            f'  return %y : {c}\n}}\n')


def full_grid():
    return ''.join(
        gemm(m, n, k, out, sw) for m, n, k, out, sw in itertools.product(
            [256, 1600, 4096, 8192], [272, 2000, 2176, 4096, 8192],
            [768, 1536], ['bf16', 'f32'], [False, True]))


def bf16_gemm(m, n, k, out, k_major):
    b = f'tensor<{n}x{k}xbf16>' if k_major else f'tensor<{k}x{n}xbf16>'
    maps = ('indexing_maps = [affine_map<(m, n, k) -> (m, k)>, '
            'affine_map<(m, n, k) -> (n, k)>, '
            'affine_map<(m, n, k) -> (m, n)>] ' if k_major else '')
    c = f'tensor<{m}x{n}x{out}>'
    name = f'b{m}x{n}x{k}_{out}_{"nk" if k_major else "kn"}'
    return (f'func.func @{name}(%a: tensor<{m}x{k}xbf16>, %b: {b}) -> {c} {{\n'
            f'  %e = tensor.empty() : {c}\n'
            f'  %y = linalg.matmul {maps}ins(%a, %b : tensor<{m}x{k}xbf16>, '
            f'{b}) outs(%e : {c}) {{nvfp4.precision = "bf16"}} -> {c}\n'
            f'  return %y : {c}\n}}\n')


def bf16_grid():
    return ''.join(
        bf16_gemm(m, n, k, out, km) for m, n, k, out, km in itertools.product(
            [256, 1600, 4096, 8192], [272, 2000, 2176, 4096, 8192],
            [72, 768, 1536], ['bf16', 'f32'], [True, False]))


def statistics(log, cubin):
    """[(kernel, spill bytes, registers, SASS instructions, stack frame
    bytes, spill store/load bytes)]; spill bytes count the stack frame too."""
    rows = re.findall(
        r'Function properties for (\S+)\n\s+(\d+) bytes stack frame, '
        r'(\d+) bytes spill stores, (\d+) bytes spill loads\n.*?'
        r'Used (\d+) registers', log)
    text = sass_stats.kernels(cubin)
    result = []
    for name, stack, stores, loads, registers in rows:
        instructions = sum(1 for lo, _ in text.get(name, [])
                           if lo & 0x1ff != 0x118)  # not NOP
        result.append((name, max(int(stack), int(stores), int(loads)),
                       int(registers), instructions, int(stack),
                       max(int(stores), int(loads))))
    return result


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument('--build', default=os.path.join(ROOT, 'build'))
    parser.add_argument('--ptxas', default=shutil.which('ptxas')
                        or '/usr/local/cuda/bin/ptxas')
    parser.add_argument('--chips', default='')
    parser.add_argument('--schedules', default='')
    parser.add_argument('--small', action='store_true')
    parser.add_argument('--bf16', action='store_true')
    parser.add_argument('--keep')
    args = parser.parse_args()
    if not args.chips:
        args.chips = 'sm_100a,sm_103a' + (',sm_120a' if args.bf16 else '')
    compiler = os.path.join(args.build, 'bin', 'nvfp4-compile')
    work = args.keep or tempfile.mkdtemp(prefix='ptxas-sweep.')
    os.makedirs(work, exist_ok=True)
    source = os.path.join(work, 'shapes.mlir')
    if args.bf16:
        with open(source, 'w') as f:
            f.write(bf16_grid())
    elif args.small:
        shutil.copy(os.path.join(ROOT, 'test', 'Target', 'Inputs',
                                 'gemm-spill-shapes.mlir'), source)
    else:
        with open(source, 'w') as f:
            f.write(full_grid())
    spilled = False
    for chip in args.chips.split(','):
        schedules = (args.schedules.split(',') if args.schedules else
                     ['rule'] if args.bf16 else
                     BOTH + (SM103 if chip == 'sm_103a' else []))
        for schedule in schedules:
            stem = os.path.join(work, f'{chip}.{schedule}')
            command = [compiler, source, f'--chip={chip}', '--no-ptxas-check',
                       '-o', stem + '.ptx']
            if schedule != 'rule':
                command.append(f'--gemm-schedule={schedule}')
            run = subprocess.run(command, capture_output=True, text=True)
            if run.returncode:
                print(f'{chip} {schedule}: nvfp4-compile failed: '
                      f'{run.stderr.strip()[:300]}')
                spilled = True
                continue
            run = subprocess.run(
                [args.ptxas, f'-arch={chip}', '-v', stem + '.ptx', '-o',
                 stem + '.cubin'], capture_output=True, text=True)
            if run.returncode:
                print(f'{chip} {schedule}: ptxas failed: '
                      f'{run.stderr.strip()[:300]}')
                spilled = True
                continue
            with open(stem + '.log', 'w') as f:
                f.write(run.stderr)
            rows = statistics(run.stderr, stem + '.cubin')
            frames = ''
            if args.bf16:
                rows = [r for r in rows if 'bf16_matmul' in r[0]]
                # The sm_120a kernels' 8-byte stack frame is ptxas's own
                # (the NVFP4 mma.sync kernel has it too, with no .local in
                # the PTX): count spill stores / loads only, report frames.
                framed = sum(1 for r in rows if r[4])
                rows = [r[:1] + (r[5],) + r[2:] for r in rows]
                frames = f', {framed} with a stack frame' if framed else ''
            spills = [r for r in rows if r[1]]
            registers = [r[2] for r in rows]
            print(f'{chip} {schedule}: {len(rows)} kernels, {len(spills)} '
                  f'spilling, registers {min(registers)}-{max(registers)}, '
                  f'{sum(r[3] for r in rows)} SASS instructions{frames}')
            for name, spill, regs, *_ in spills:
                print(f'  {name}: {spill} bytes, {regs} registers')
            spilled |= bool(spills)
    if not args.keep:
        shutil.rmtree(work)
    return 1 if spilled else 0


if __name__ == '__main__':
    sys.exit(main())
