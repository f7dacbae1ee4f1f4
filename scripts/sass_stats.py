#!/usr/bin/env python3
"""Static SASS statistics of an sm_90a cubin, for machines without cuobjdump.

The development machine has ptxas but no disassembler. This reads the
cubin's ELF `.text.<kernel>` sections (16-byte instructions on sm_90), finds
the loops (a BRA whose offset is negative) and counts the instructions of the
outermost loop of each kernel by opcode class. The opcode is the low 9 bits of
the instruction's first 64-bit word (bits 9-11 give the operand form); the
names below were matched by compiling one-instruction PTX kernels with ptxas
(2026-12-01); a class not in the table prints as its hex value. The BRA
offset, in 4-byte units, has its low 8 bits at bit 16 and the rest from bit 34.
Counts are static (both sides of an `if` in the loop count), which is what a
per-element cost of straight-line kernels needs.

usage: sass_stats.py CUBIN [--elements N] [--kernel SUBSTRING] [--all]
  --elements N  the input elements one thread handles per iteration of the
                outermost loop: prints instructions per element
"""
import argparse
import collections
import struct
import sys

NAMES = {
    0x002: 'MOV', 0x005: 'CS2R', 0x007: 'SEL', 0x008: 'FSEL', 0x009: 'FMNMX',
    0x00b: 'FSETP', 0x00c: 'ISETP', 0x010: 'IADD3', 0x011: 'LEA',
    0x012: 'LOP3', 0x016: 'PRMT', 0x019: 'SHF', 0x01a: 'SGXT', 0x020: 'FMUL',
    0x021: 'FADD', 0x023: 'FFMA', 0x024: 'IMAD', 0x025: 'IMAD.WIDE',
    0x027: 'IMAD.HI', 0x030: 'HADD2', 0x031: 'HFMA2', 0x035: 'HFMA2.BF16',
    0x03e: 'F2FP', 0x040: 'HMNMX2', 0x048: 'VIMNMX', 0x118: 'NOP',
    0x119: 'S2R', 0x11d: 'BAR', 0x147: 'BRA', 0x14d: 'EXIT', 0x181: 'LDG',
    0x182: 'LDC', 0x184: 'LDS', 0x186: 'STG', 0x188: 'STS', 0x189: 'SHFL',
    0x1b9: 'ULDC',
}


def kernels(path):
    """{kernel name: [(lo, hi), ...]} from the ELF sections of `path`."""
    data = open(path, 'rb').read()
    if data[:4] != b'\x7fELF' or data[4] != 2:
        sys.exit(f'sass_stats: {path}: not a 64-bit ELF cubin')
    shoff = struct.unpack_from('<Q', data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', data, 0x3a)
    headers = [struct.unpack_from('<IIQQQQ', data, shoff + i * shentsize)
               for i in range(shnum)]
    strings = headers[shstrndx][4]
    result = {}
    for name, _, _, _, offset, size in headers:
        end = data.index(b'\0', strings + name)
        section = data[strings + name:end].decode()
        if section.startswith('.text.'):
            result[section[6:]] = [struct.unpack_from('<QQ', data, offset + 16 * k)
                                   for k in range(size // 16)]
    return result


def name_of(lo):
    op = lo & 0x1ff
    return NAMES.get(op, f'op{op:03x}')


def branch_target(index, lo):
    """Target instruction index of a BRA at `index`."""
    units = ((lo >> 16) & 0xff) | ((lo >> 34) << 8)
    if units & (1 << 37):
        units -= 1 << 38
    return index + 1 + (units * 4) // 16


def loops(instructions):
    """(start, end) index ranges of backward branches, outermost first."""
    found = []
    for i, (lo, _) in enumerate(instructions):
        if lo & 0x1ff == 0x147:
            target = branch_target(i, lo)
            if target < i:
                found.append((target, i))
    found.sort(key=lambda r: r[0] - r[1])
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('cubin')
    parser.add_argument('--elements', type=float)
    parser.add_argument('--kernel', default='')
    parser.add_argument('--all', action='store_true',
                        help='every loop, not only the outermost')
    args = parser.parse_args()
    for kernel, ins in kernels(args.cubin).items():
        if args.kernel not in kernel:
            continue
        real = [x for x in ins if x[0] & 0x1ff != 0x118]
        print(f'{kernel}: {len(real)} instructions')
        ranges = loops(ins)
        for start, end in ranges if args.all else ranges[:1]:
            body = [x for x in ins[start:end + 1] if x[0] & 0x1ff != 0x118]
            count = collections.Counter(name_of(lo) for lo, _ in body)
            line = f'  loop [{start * 16:#x}, {end * 16:#x}]: {len(body)}'
            if args.elements:
                line += f' = {len(body) / args.elements:.2f} per element'
            print(line)
            print('    ' + ' '.join(f'{n}:{c}' for n, c in count.most_common()))


if __name__ == '__main__':
    main()
