#!/usr/bin/env python3
"""Static model of the Blackwell NVFP4 GEMM schedules (issue 17).

(sm_100a/sm_103a below; --sm120 models the sm_120a mma.sync schedules, see
the section further down.)

No Blackwell GPU is available, so the choice of default schedule is argued
from instruction shapes and published peaks instead of measurements. Per
schedule and shape the model estimates, per SM and per 256-code K step,

  * the tensor-pipe time: the step's FLOPs at the chip's per-SM dense FP4
    peak, where on sm_103a the K = 64 MMA is assumed to issue at the same
    instruction rate as the K = 96 one (so K = 64 reaches 2/3 of the peak:
    the 1.5x of GB300 over B200 comes with the K = 96 form, which is what
    CUTLASS's example 89 uses);
  * the shared-memory time: bytes the TMA writes (codes + 128x4 scale atoms
    of the SM's A rows and of the B rows it loads) plus bytes the MMAs read
    (A and B rows x 128 code bytes; with cta_group::2 each SM of the pair
    holds and reads half of B), at SMEM_BYTES_PER_CLK;
  * the L2 -> SM (TMA) time: the bytes the SM loads at its share of the L2
    bandwidth;
  * the epilogue per tile: the accumulator read from Tensor Memory and C
    written at the SM's share of HBM bandwidth, and the bytes of the
    epilogue's own path: the direct stores (one row of C per lane, 16-byte
    st.global per lane and instruction, so every instruction touches 32
    different 128-byte lines) at GLOBAL_STORE_LINES_PER_CLK lines per clock
    in the SM's load/store unit; the TMA store ("_ts": st.shared into
    staging buffers, then cp.async.bulk.tensor) at the shared-memory rate
    for the staging writes plus the TMA's reads, and C at the SM's L2 share.
    Without a second TMEM accumulator stage it adds to the tile's time; with
    one (the persistent schedule) only the part longer than the mainloop
    does;
  * waves: ceil(tiles / SMs) (one tile per CTA) or the persistent loop's
    ceil over the same tiles, and the HBM floor (A, B read once, C written).

Every constant below is a published figure or a stated assumption; change
them on the command line (--help). Plain python3, no numpy.
"""
import argparse
import math

CHIPS = {
    # dense FP4 FLOP/s, SMs, boost clock (Hz, assumed), HBM B/s, L2 B/s
    # (assumed: ~2.5x HBM, per-SM share).
    "sm_100a": dict(name="B200", peak=9.0e15, sms=148, clock=1.9e9,
                    hbm=8.0e12, l2=20.0e12, k96=False),
    "sm_103a": dict(name="GB300", peak=15.0e15, sms=160, clock=1.9e9,
                    hbm=8.0e12, l2=20.0e12, k96=True),
}
SMEM_BYTES_PER_CLK = 128  # per SM (assumed: 32 banks x 4 bytes)
# Whether the MMAs' operand reads compete with the TMA's writes for that
# bandwidth (assumed yes; --mma-reads-free models a separate path).
MMA_READS_FREE = False
TMEM_BYTES_PER_CLK = 512  # per SM for tcgen05.ld (assumed)
# Global stores whose 32 lanes write 32 different 128-byte lines are split
# by the SM's L1 into one request per line (assumed: one line per clock;
# --store-lines-per-clk): a warp's 16-byte direct stores move 16 B/clk.
GLOBAL_STORE_LINES_PER_CLK = 1
K_STEP = 256              # codes per pipeline stage (kGemmTileK)


class Schedule:
    def __init__(self, name, tile_m, tile_n, cta_group=1, mma_k=64,
                 persistent=False, acc_stages=2, tma_store=False,
                 built=False):
        self.name, self.tile_m, self.tile_n = name, tile_m, tile_n
        # The epilogue's path: the TMA store (_ts) or direct stores; and
        # whether Tcgen05Matmul.cpp builds the schedule (what the rule
        # chooses among).
        self.tma_store, self.built = tma_store, built
        self.cta_group, self.mma_k, self.persistent = cta_group, mma_k, persistent
        # TMEM accumulator stages of a persistent schedule: 2 overlap tile
        # i's epilogue with tile i + 1's mainloop; with 1 the MMAs of the
        # next tile wait for the epilogue (the producer still runs ahead);
        # "half" (the pair's overlapping accumulators, tile i + 1 starting
        # 128 columns into tile i's 256) waits for half of it.
        self.acc_stages = acc_stages

    def ok(self, chip, k):
        if self.mma_k == 96:
            return chip["k96"] and k % 768 == 0
        return k % K_STEP == 0


SCHEDULES = [
    Schedule("128x128x256_s4 (1-CTA, K=64, a tile per CTA)", 128, 128),
    Schedule("128x128x256_s4_ts (the same, TMA store)", 128, 128,
             tma_store=True, built=True),
    Schedule("128x128x256_s6_mk96 (1-CTA, K=96)", 128, 128, mma_k=96,
             built=True),
    # Its 32 KiB of staging do not fit beside 6 stages: over the ring (one
    # tile per CTA). The persistent K = 96 kernel has no _ts for that reason.
    Schedule("128x128x256_s6_mk96_ts (1-CTA, K=96, TMA store over the ring)",
             128, 128, mma_k=96, tma_store=True, built=True),
    Schedule("128x128x256_s4_p8 (persistent, 2 TMEM stages)", 128, 128, persistent=True),
    Schedule("128x128x256_s4_p8_ts (persistent, TMA store)", 128, 128,
             persistent=True, tma_store=True, built=True),
    Schedule("128x128x256_s6_p8_mk96 (persistent, K=96)", 128, 128,
             mma_k=96, persistent=True, built=True),
    Schedule("128x256 1-CTA", 128, 256),
    Schedule("256x256 cta_group::2 persistent (CUTLASS 72a)", 256, 256,
             cta_group=2, persistent=True),
    Schedule("256x256 cta_group::2 persistent K=96", 256, 256, cta_group=2,
             mma_k=96, persistent=True),
    # Ours (Tcgen05Matmul.cpp): 256 columns of accumulator per CTA leave
    # no room for a second stage; the accumulators of consecutive tiles
    # overlap by half (columns 0 / 128, as CUTLASS's 72a PTX does).
    Schedule("128x256x256_s5_p8_c2_cg2 (ours: pair, overlapping accumulators)",
             256, 256, cta_group=2, persistent=True, acc_stages="half"),
    Schedule("128x256x256_s5_p8_c2_cg2_ts (ours: pair, TMA store)",
             256, 256, cta_group=2, persistent=True, acc_stages="half",
             tma_store=True, built=True),
]


def estimate(chip, s, m, n, k, out_bytes=2):
    per_sm_peak = chip["peak"] / chip["sms"]
    if s.mma_k == 64 and chip["k96"]:
        per_sm_peak *= 64 / 96
    rows_a = s.tile_m // s.cta_group          # A rows per SM
    rows_b = s.tile_n // s.cta_group          # B rows each SM holds
    flops_sm = 2 * rows_a * s.tile_n * K_STEP  # per SM per K step
    t_mma = flops_sm / per_sm_peak
    fill = (rows_a + rows_b) * (K_STEP // 2) + (rows_a + rows_b) * 16
    read = 0 if MMA_READS_FREE else (rows_a + rows_b) * (K_STEP // 2)
    t_smem = (fill + read) / (SMEM_BYTES_PER_CLK * chip["clock"])
    t_tma = fill / (chip["l2"] / chip["sms"])
    t_step = max(t_mma, t_smem, t_tma)
    steps = k // K_STEP
    t_main = steps * t_step
    acc = rows_a * s.tile_n * 4
    c = rows_a * s.tile_n * out_bytes
    t_epi = max(acc / (TMEM_BYTES_PER_CLK * chip["clock"]),
                c / (chip["hbm"] / chip["sms"]),
                epilogue_path_time(chip, s, c))
    tiles = math.ceil(m / s.tile_m) * math.ceil(n / s.tile_n)
    ctas = tiles * s.cta_group
    waves = math.ceil(ctas / chip["sms"])
    if s.persistent and s.acc_stages == 2:
        # Two TMEM accumulator stages: tile i's epilogue runs under tile
        # i + 1's mainloop; the shorter of the two is exposed once.
        t = waves * max(t_main, t_epi) + min(t_main, t_epi)
    elif s.persistent and s.acc_stages == "half":
        # The first half of the epilogue holds the next tile's MMAs, the
        # second runs under them.
        t = waves * (max(t_main, t_epi / 2) + t_epi / 2) + t_epi / 2
    else:
        t = waves * (t_main + t_epi)
    hbm = (m * k + n * k) / 2 * (1 + 1 / 16) + m * n * out_bytes
    t = max(t, hbm / chip["hbm"])
    bound = max(("tensor", t_mma), ("smem", t_smem), ("tma", t_tma),
                key=lambda x: x[1])[0]
    return dict(tflops=2 * m * n * k / t / 1e12, bound=bound,
                frac=2 * m * n * k / t / chip["peak"], waves=waves,
                t_mma=t_mma, t_smem=t_smem, t_tma=t_tma, t_epi=t_epi,
                t_main=t_main)


def epilogue_path_time(chip, s, c):
    """The time of the epilogue's own path for c bytes of C per SM."""
    if s.tma_store:
        # Conflict-free 16-byte st.shared (4 wavefronts per warp
        # instruction) plus the TMA's reads of the same bytes; C leaves at
        # the SM's L2 share.
        return max(2 * c / (SMEM_BYTES_PER_CLK * chip["clock"]),
                   c / (chip["l2"] / chip["sms"]))
    # 16 bytes per lane and instruction, 32 lines per instruction.
    return c / (16 * GLOBAL_STORE_LINES_PER_CLK * chip["clock"])


def pair_rule(chip, m, n, k, batch=1):
    """chooseTcgen05Schedule's test for the CTA pair (Tcgen05Matmul.cpp)."""
    sms = chip["sms"]
    tiles = batch * math.ceil(m / 128) * math.ceil(n / 128)
    pair_ctas = 2 * batch * math.ceil(m / 256) * math.ceil(n / 256)
    steps = k // K_STEP
    return math.ceil(pair_ctas / sms) * (steps + 2) < \
        math.ceil(tiles / sms) * steps


def one_cta_rule(chip, m, n, k, batch=1):
    """chooseTcgen05Schedule's 1-CTA choice (N % 8 == 0: the TMA store)."""
    tiles = batch * math.ceil(m / 128) * math.ceil(n / 128)
    if tiles > chip["sms"]:
        name = "128x128x256_s4_p8_ts"
    elif chip["k96"] and k % 768 == 0:
        name = "128x128x256_s6_mk96_ts"
    else:
        name = "128x128x256_s4_ts"
    return next(s for s in SCHEDULES if s.name.split(" ")[0] == name)


def check_rule():
    """Compares pair_rule with the model's own choice between the pair as
    built and the best 1-CTA schedule over a grid of shapes (every N of the
    grid is a multiple of 8: the rule's TMA store, except the K = 96
    kernel), and the rule's TMA store with the direct stores of the same
    schedule."""
    pair = next(s for s in SCHEDULES
                if s.cta_group == 2 and s.acc_stages == "half" and s.built)
    agree = close = total = 0
    ts_agree = ts_total = 0
    one_agree = 0
    for chip in CHIPS.values():
        for m in [128, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096,
                  8192, 16384]:
            for n in [256, 512, 1024, 2048, 4096, 4352, 8192, 14336]:
                for k in [256, 512, 1024, 1536, 2048, 3072, 4096, 8192]:
                    one = max(estimate(chip, s, m, n, k)["tflops"]
                              for s in SCHEDULES
                              if s.cta_group == 1 and s.tile_n == 128 and
                              s.built and s.ok(chip, k))
                    if estimate(chip, one_cta_rule(chip, m, n, k), m, n,
                                k)["tflops"] >= one * (1 - 1e-9):
                        one_agree += 1
                    # The TMA store against the direct stores of the same
                    # schedule, BF16 and FP32 C: never slower.
                    for ts in SCHEDULES:
                        if not ts.tma_store:
                            continue
                        direct = next(
                            d for d in SCHEDULES if not d.tma_store and
                            (d.tile_m, d.tile_n, d.cta_group, d.mma_k,
                             d.persistent, d.acc_stages) ==
                            (ts.tile_m, ts.tile_n, ts.cta_group, ts.mma_k,
                             ts.persistent, ts.acc_stages))
                        for out_bytes in (2, 4):
                            ts_total += 1
                            if estimate(chip, ts, m, n, k, out_bytes)[
                                    "tflops"] >= estimate(
                                        chip, direct, m, n, k,
                                        out_bytes)["tflops"]:
                                ts_agree += 1
                    two = estimate(chip, pair, m, n, k)["tflops"]
                    total += 1
                    if (two > one) == pair_rule(chip, m, n, k):
                        agree += 1
                    elif abs(two - one) <= 0.01 * max(one, two):
                        close += 1
    print(f"the CTA-pair rule agrees with the model on {agree} of {total} "
          f"shapes; {close} of the others are within 1%")
    print(f"the 1-CTA rule takes the model's best 1-CTA schedule on "
          f"{one_agree} of {total} shapes")
    print(f"the TMA store is at least as fast as the direct stores on "
          f"{ts_agree} of {ts_total} schedule shapes")


# --- sm_120a (RTX 50 / RTX PRO Blackwell): mma.sync block_scale ------------
#
# Published (NVIDIA's RTX Blackwell product figures): RTX 5090 170 SMs, 2.407
# GHz boost, 1,792 GB/s GDDR7, 96 MB L2, 3,352 "AI TOPS" = FP4 with 2:4
# sparsity, so 1,676 TFLOP/s dense; RTX PRO 6000 Blackwell 188 SMs, 4,000
# AI TOPS (2,000 dense), 125 TFLOP/s FP32 (24,064 cores: 2.6 GHz), 1,792
# GB/s, 128 MB L2. Both are 4,096 dense FP4 FLOP per SM and clock: one
# m16n8k64 MMA (16,384 FLOP) per 16 clocks on each of an SM's 4 tensor
# cores. Assumed: L2 -> SM bandwidth 2.5x DRAM (as above), shared memory
# 128 B (one wavefront) per clock, one instruction issued per clock per
# scheduler, and the latency of a TMA copy from issue to "full" under load.
SM120_CHIPS = {
    "RTX 5090": dict(sms=170, clock=2.407e9, dram=1.792e12),
    "RTX PRO 6000": dict(sms=188, clock=2.6e9, dram=1.792e12),
}
SM120_FLOP_PER_CLK = 4096
SM120_L2_OVER_DRAM = 2.5
SM120_TMA_LATENCY = 1.0e-6  # seconds (assumed; --tma-latency-ns)


class MmaSyncSchedule:
    """One schedule of MmaBlockScaleMatmul.cpp: a 128 x 128 tile, 8
    consumer warps (4 x 2 of 32 x 64: ldmatrix; the kernel before was 2 x 4
    of 64 x 32 with 32-bit loads), K = tile_k per stage."""

    def __init__(self, name, tile_k, stages, ldmatrix, tma_store):
        self.name, self.tile_k, self.stages = name, tile_k, stages
        self.ldmatrix, self.tma_store = ldmatrix, tma_store


SM120_SCHEDULES = [
    MmaSyncSchedule("128x128x256_s2 (before: 32-bit loads, direct stores)",
                    256, 2, ldmatrix=False, tma_store=False),
    MmaSyncSchedule("128x128x256_s2 (ldmatrix, direct stores)", 256, 2,
                    ldmatrix=True, tma_store=False),
    MmaSyncSchedule("128x128x128_s4 (ldmatrix, direct stores)", 128, 4,
                    ldmatrix=True, tma_store=False),
    MmaSyncSchedule("128x128x128_s4_ts (ldmatrix, stmatrix + TMA store; "
                    "CUTLASS 79a)", 128, 4, ldmatrix=True, tma_store=True),
]


def estimate_sm120(chip, s, m, n, k, out_bytes=2, swizzled=True,
                   latency=None):
    latency = SM120_TMA_LATENCY if latency is None else latency
    clock, sms = chip["clock"], chip["sms"]
    tile = 128
    steps_k64 = s.tile_k // 64
    t_mma = 2 * tile * tile * s.tile_k / (SM120_FLOP_PER_CLK * clock)
    # TMA bytes per stage: codes and scales, each byte once (linear scales
    # at K = 128 arrive in a 16-byte box once per pair of stages,
    # GemmPlan::pairsScaleSteps: the TMA's inner extent is at least 16
    # bytes).
    codes = 2 * tile * s.tile_k // 2
    scales = 2 * tile * (s.tile_k // 16)
    fill = codes + scales
    t_tma = fill / (SM120_L2_OVER_DRAM * chip["dram"] / sms)
    # Shared-memory wavefronts (128 B each) per stage: the TMA's writes,
    # each warp's code loads (its A and B rows: the same bytes for
    # ldmatrix.x4, 4 wavefronts, as for 32-bit loads, 1 each), and the
    # scale loads (at least one wavefront per instruction).
    if s.ldmatrix:  # 4 x 2 warps: 2 A fragments, 4 B pairs per K = 64
        code_wavefronts = steps_k64 * (2 + 4) * 4
        code_instrs = steps_k64 * (2 + 4)
        # Scale words: one 32-bit load per row and K = 64 from 128x4
        # atoms; one vector load per row of a stage's (or a pair's: K =
        # 128) contiguous linear bytes.
        scale_instrs = (2 + 8) * (steps_k64 if swizzled else
                                  (0.5 if s.tile_k == 128 else 1))
    else:  # 2 x 4 warps: 4 A fragments x 4 words, 4 B x 2 words
        code_wavefronts = code_instrs = steps_k64 * (4 * 4 + 4 * 2)
        scale_instrs = steps_k64 * (4 + 4)
    wavefronts = fill / 128 + 8 * (code_wavefronts + scale_instrs)
    t_smem = wavefronts / clock
    # Issue slots per scheduler (2 consumer warps each): MMAs and loads.
    issue = 2 * (steps_k64 * 16 + code_instrs + scale_instrs)
    t_issue = issue / clock
    t_step = max(t_mma, t_tma, t_smem, t_issue)
    # A stage's copy is issued when the stage is released and must land
    # within the stages - 1 steps the consumers still have.
    stall = max(0.0, latency - (s.stages - 1) * t_step)
    k_steps = k // s.tile_k
    t_main = k_steps * (t_step + stall)
    # The epilogue, exposed once per tile (one CTA per SM, no overlap):
    # C at the SM's L2 share, where the direct stores of BF16 pairs move
    # 16 of each 32-byte sector per request (FP32 pairs fill them) and the
    # TMA store writes whole 128-byte rows.
    c = tile * tile * out_bytes
    pieces = 16 if (out_bytes == 2 and not s.tma_store) else 32
    t_epi = c / pieces * 32 / (SM120_L2_OVER_DRAM * chip["dram"] / sms)
    tiles = math.ceil(m / tile) * math.ceil(n / tile)
    waves = math.ceil(tiles / sms)
    t = waves * (t_main + t_epi)
    dram = (m * k + n * k) / 2 * (1 + 1 / 16) + m * n * out_bytes
    t = max(t, dram / chip["dram"])
    peak = SM120_FLOP_PER_CLK * clock * sms
    bound = max(("tensor", t_mma), ("tma", t_tma), ("smem", t_smem),
                ("issue", t_issue), key=lambda x: x[1])[0]
    return dict(tflops=2 * m * n * k / t / 1e12, frac=2 * m * n * k / t / peak,
                bound=bound, t_mma=t_mma, t_tma=t_tma, t_smem=t_smem,
                t_issue=t_issue, stall=stall, t_epi=t_epi, t_main=t_main,
                hidden=(s.stages - 1) * t_step)


def sm120_rule(m, n, k):
    """chooseMmaBlockScaleSchedule (MmaBlockScaleMatmul.cpp)."""
    return 3 if n % 8 == 0 else 2


def check_sm120_rule():
    """The rule's schedule against the model's best over a grid, both
    chips, BF16 and FP32 C, swizzled and linear scales."""
    agree = close = total = 0
    worst = (0.0, None)
    for chip in SM120_CHIPS.values():
        for m in [16, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]:
            for n in [256, 1000, 2048, 4096, 8192, 14336]:
                for k in [256, 512, 1024, 2048, 4096, 8192]:
                    for out_bytes in (2, 4):
                        for swizzled in (True, False):
                            r = [estimate_sm120(chip, s, m, n, k, out_bytes,
                                                swizzled)["tflops"]
                                 if (s.tma_store is False or n % 8 == 0)
                                 else 0.0 for s in SM120_SCHEDULES]
                            best = max(r)
                            got = r[sm120_rule(m, n, k)]
                            total += 1
                            if got >= best:
                                agree += 1
                            elif got >= 0.99 * best:
                                close += 1
                            if best / got - 1 > worst[0]:
                                worst = (best / got - 1, (m, n, k, out_bytes,
                                                          swizzled))
    print(f"L2 {SM120_L2_OVER_DRAM}x DRAM, TMA latency "
          f"{SM120_TMA_LATENCY * 1e9:.0f} ns: "
          f"the sm_120a rule is the model's best on {agree} of {total} "
          f"shapes; {close} of the others are within 1%"
          + (f"; worst {worst[0]:.1%} at MxNxK, C bytes, 128x4 = "
             f"{worst[1]}" if worst[1] else ""))


def print_sm120(shapes, markdown, latency):
    for chip_name, chip in SM120_CHIPS.items():
        peak = SM120_FLOP_PER_CLK * chip["clock"] * chip["sms"]
        print(f"\nsm_120a ({chip_name}: {peak / 1e12:.0f} TFLOP/s dense FP4, "
              f"{chip['sms']} SMs; TMA latency {latency * 1e9:.0f} ns "
              f"assumed)")
        if markdown:
            print("\n| shape | schedule | scales | TFLOP/s | of peak | step "
                  "bound | MMA / TMA / smem / issue per stage (ns) | latency "
                  "hidden (ns) | epilogue per tile (ns) |")
            print("|---|---|---|---|---|---|---|---|---|")
        for m, n, k in shapes:
            for swizzled in (True, False):
                for s in SM120_SCHEDULES:
                    r = estimate_sm120(chip, s, m, n, k, 2, swizzled, latency)
                    row = (f"{m}x{n}x{k}", s.name,
                           "128x4" if swizzled else "linear",
                           f"{r['tflops']:.0f}", f"{r['frac']:.0%}",
                           r["bound"],
                           f"{r['t_mma'] * 1e9:.0f} / {r['t_tma'] * 1e9:.0f}"
                           f" / {r['t_smem'] * 1e9:.0f} / "
                           f"{r['t_issue'] * 1e9:.0f}",
                           f"{r['hidden'] * 1e9:.0f}",
                           f"{r['t_epi'] * 1e9:.0f}")
                    if markdown:
                        print("| " + " | ".join(row) + " |")
                    else:
                        print("  ".join(f"{x:<60}" if i == 1 else f"{x:<14}"
                                        for i, x in enumerate(row)))


def main():
    global SMEM_BYTES_PER_CLK, MMA_READS_FREE, GLOBAL_STORE_LINES_PER_CLK
    global SM120_L2_OVER_DRAM, SM120_TMA_LATENCY
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shape", action="append",
                    help="MxNxK (repeatable); default: a decode, an FFN and "
                         "the 8192^3 of the published figures")
    ap.add_argument("--markdown", action="store_true",
                    help="print Markdown tables (bench/RESULTS.md)")
    ap.add_argument("--smem-bytes-per-clk", type=int,
                    default=128)
    ap.add_argument("--store-lines-per-clk", type=float,
                    default=GLOBAL_STORE_LINES_PER_CLK,
                    help="128-byte lines the L1 takes per clock from "
                         "uncoalesced global stores (the direct epilogue)")
    ap.add_argument("--out-bytes", type=int, default=2, choices=(2, 4),
                    help="bytes per element of C (2: BF16, 4: FP32)")
    ap.add_argument("--mma-reads-free", action="store_true",
                    help="the MMAs read shared memory without taking "
                         "bandwidth from the TMA")
    ap.add_argument("--check-rule", action="store_true",
                    help="compare the compiler's CTA-pair rule with the "
                         "model over a grid of shapes")
    ap.add_argument("--sm120", action="store_true",
                    help="the sm_120a mma.sync schedules instead")
    ap.add_argument("--tma-latency-ns", type=float,
                    default=SM120_TMA_LATENCY * 1e9,
                    help="sm_120a: assumed TMA copy latency under load")
    ap.add_argument("--l2-over-dram", type=float, default=SM120_L2_OVER_DRAM,
                    help="sm_120a: assumed L2 -> SM bandwidth over DRAM's")
    args = ap.parse_args()
    GLOBAL_STORE_LINES_PER_CLK = args.store_lines_per_clk
    SM120_L2_OVER_DRAM = args.l2_over_dram
    SM120_TMA_LATENCY = args.tma_latency_ns * 1e-9
    if args.check_rule and args.sm120:
        check_sm120_rule()
        return
    if args.check_rule:
        check_rule()
        return
    if args.sm120:
        shapes = [tuple(int(x) for x in sh.split("x")) for sh in args.shape] \
            if args.shape else [(128, 4096, 4096), (2048, 4352, 1536),
                                (8192, 8192, 8192)]
        print_sm120(shapes, args.markdown, args.tma_latency_ns * 1e-9)
        return
    SMEM_BYTES_PER_CLK = args.smem_bytes_per_clk
    MMA_READS_FREE = args.mma_reads_free
    shapes = [tuple(int(x) for x in sh.split("x")) for sh in args.shape] \
        if args.shape else [(128, 4096, 4096), (2048, 4352, 1536),
                            (16384, 14336, 4096), (8192, 8192, 8192),
                            (8192, 8192, 8448)]
    for chip_name, chip in CHIPS.items():
        print(f"\n{chip_name} ({chip['name']}: {chip['peak'] / 1e15:.0f} "
              f"PFLOP/s dense FP4, {chip['sms']} SMs)")
        if args.markdown:
            print("\n| shape | schedule | TFLOP/s | of peak | step bound "
                  "| MMA / smem / TMA per step (ns) | epilogue per tile (ns) |")
            print("|---|---|---|---|---|---|---|")
        for m, n, k in shapes:
            for s in SCHEDULES:
                if not s.ok(chip, k):
                    continue
                r = estimate(chip, s, m, n, k, args.out_bytes)
                row = (f"{m}x{n}x{k}", s.name, f"{r['tflops']:.0f}",
                       f"{r['frac']:.0%}", r["bound"],
                       f"{r['t_mma'] * 1e9:.0f} / {r['t_smem'] * 1e9:.0f} / "
                       f"{r['t_tma'] * 1e9:.0f}", f"{r['t_epi'] * 1e9:.0f}")
                if args.markdown:
                    print("| " + " | ".join(row) + " |")
                else:
                    print("  ".join(f"{x:<48}" if i == 1 else f"{x:<16}"
                                    for i, x in enumerate(row)))


if __name__ == "__main__":
    main()
