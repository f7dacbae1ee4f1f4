#!/usr/bin/env python3
"""The warp stall reasons of each kernel in an `ncu --page raw --csv`
dump (bench/ncu_quantize.sh writes one, each report after a "== PROGRAM"
line), largest first, with the headline metrics beside them; with
--source, also each kernel's SASS opcodes from an `ncu --page source --csv
--print-source sass` dump: their share of the executed warp instructions
and their most sampled stall reasons:

  python3 bench/ncu_stalls.py raw.csv [--source source.csv]

A stall reason's number is ncu's average warps stalled for that reason per
issued instruction (cycles between a warp's issues, split by reason); the
sampled column is the share of the SourceCounters' PC samples.
"""
import csv
import re
import sys

HEADLINE = [
    ("gpu__time_duration.sum", "duration"),
    ("dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM % of peak"),
    ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "SM % of peak"),
    ("launch__registers_per_thread", "registers"),
    ("launch__occupancy_limit_registers", "blocks/SM by registers"),
    ("launch__occupancy_limit_shared_mem", "blocks/SM by shared memory"),
    ("sm__warps_active.avg.pct_of_peak_sustained_active", "achieved occupancy %"),
    ("smsp__warps_active.avg.per_cycle_active", "warps active / scheduler"),
    ("smsp__warps_eligible.avg.per_cycle_active", "warps eligible / scheduler"),
    ("smsp__issue_active.avg.pct_of_peak_sustained_active", "issue active %"),
    ("smsp__average_warp_latency_per_inst_issued.ratio", "cycles between issues"),
    ("smsp__inst_executed.sum", "warp instructions"),
    ("l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum.per_second", "global load B/s"),
]
STALL = re.compile(r"smsp__average_warps?_issue_stalled_(\w+?)_per_issue_active\.ratio$")
SAMPLED = re.compile(r"smsp__pcsamp_warps_issue_stalled_(\w+)$")


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def reports(path):
    """(program, header, units, rows) for each "== program" part."""
    program, lines = None, []
    with open(path, newline="") as f:
        for line in f:
            if line.startswith("== "):
                if lines:
                    yield program, lines
                program, lines = line[3:].strip(), []
            elif line.startswith('"'):
                lines.append(line)
    if lines:
        yield program, lines


def opcodes(path):
    """Per kernel of a source-page dump: executed share and top stalls of
    each SASS opcode (predicates and modifiers dropped)."""
    for program, lines in reports(path):
        table = list(csv.reader(lines))
        # The first row names the kernel, the second the columns.
        if len(table) < 3:
            continue
        header = table[1]
        stall_columns = [c for c in header
                         if c.startswith("stall_") and "Not Issued" not in c]
        executed, stalls = {}, {}
        total = 0
        for row in table[2:]:
            if len(row) != len(header):
                continue
            value = dict(zip(header, row))
            m = re.match(r"\s*(@!?U?P\w+\s+)?([A-Z0-9_]+)", value["Source"])
            n = number(value.get("Instructions Executed", "") or "0")
            if not m or n is None:
                continue
            op = m.group(2)
            executed[op] = executed.get(op, 0) + n
            total += n
            for c in stall_columns:
                samples = number(value[c] or "0") or 0
                if samples:
                    stalls.setdefault(op, {})
                    stalls[op][c[6:]] = stalls[op].get(c[6:], 0) + samples
        print(f"== {program}: {table[0][1] if len(table[0]) > 1 else '?'}: "
              f"{total:.0f} warp instructions")
        for op in sorted(executed, key=lambda o: -executed[o]):
            share = 100 * executed[op] / (total or 1)
            if share < 0.5:
                break
            top = sorted(stalls.get(op, {}).items(), key=lambda kv: -kv[1])[:3]
            print(f"  {op:10} {share:6.2f}%  " +
                  ", ".join(f"{k} {v:.0f}" for k, v in top))
        print()


def main():
    if "--source" in sys.argv:
        opcodes(sys.argv[sys.argv.index("--source") + 1])
    for program, lines in reports(sys.argv[1]):
        table = list(csv.reader(lines))
        if len(table) < 3:
            print(f"== {program}: no kernel in the report\n")
            continue
        header, units = table[0], table[1]
        for row in table[2:]:
            value = dict(zip(header, row))
            unit = dict(zip(header, units))
            print(f"== {program}: {value.get('Kernel Name', '?')}")
            for metric, label in HEADLINE:
                if metric in value:
                    print(f"  {label:28} {value[metric]} {unit.get(metric, '')}".rstrip())
            stalls = {}
            for metric, text in value.items():
                m = STALL.match(metric)
                if m and number(text) is not None:
                    stalls[m.group(1)] = number(text)
            sampled = {}
            for metric, text in value.items():
                m = SAMPLED.match(metric)
                if m and number(text) is not None and not m.group(1).endswith("_not_issued"):
                    sampled[m.group(1)] = number(text)
            total = sum(stalls.values()) or 1.0
            samples = sum(sampled.values()) or 1.0
            print(f"  {'stall reason':28} {'per issue':>10} {'share':>7} {'sampled':>8}")
            for reason in sorted(set(stalls) | set(sampled),
                                 key=lambda r: -stalls.get(r, 0.0)):
                s = stalls.get(reason)
                print(f"  {reason:28} {s if s is not None else float('nan'):10.2f} "
                      f"{100 * (s or 0) / total:6.1f}% "
                      f"{100 * sampled.get(reason, 0.0) / samples:7.1f}%")
            print()


if __name__ == "__main__":
    main()
