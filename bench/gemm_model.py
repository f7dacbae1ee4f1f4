#!/usr/bin/env python3
"""Static model of the Blackwell NVFP4 GEMM schedules (issue 17).

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
    written at the SM's share of HBM bandwidth. Without a second TMEM
    accumulator stage it adds to the tile's time; with one (the persistent
    schedule) only the part longer than the mainloop does;
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
K_STEP = 256              # codes per pipeline stage (kGemmTileK)


class Schedule:
    def __init__(self, name, tile_m, tile_n, cta_group=1, mma_k=64,
                 persistent=False, acc_stages=2):
        self.name, self.tile_m, self.tile_n = name, tile_m, tile_n
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
    Schedule("128x128x256_s6_mk96 (1-CTA, K=96)", 128, 128, mma_k=96),
    Schedule("128x128x256_s4_p8 (persistent, 2 TMEM stages)", 128, 128, persistent=True),
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
                c / (chip["hbm"] / chip["sms"]))
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


def pair_rule(chip, m, n, k, batch=1):
    """chooseTcgen05Schedule's test for the CTA pair (Tcgen05Matmul.cpp)."""
    sms = chip["sms"]
    tiles = batch * math.ceil(m / 128) * math.ceil(n / 128)
    pair_ctas = 2 * batch * math.ceil(m / 256) * math.ceil(n / 256)
    steps = k // K_STEP
    return math.ceil(pair_ctas / sms) * (steps + 2) < \
        math.ceil(tiles / sms) * steps


def check_rule():
    """Compares pair_rule with the model's own choice between the pair as
    built and the best 1-CTA schedule over a grid of shapes."""
    pair = next(s for s in SCHEDULES
                if s.cta_group == 2 and s.acc_stages == "half")
    agree = close = total = 0
    for chip in CHIPS.values():
        for m in [128, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096,
                  8192, 16384]:
            for n in [256, 512, 1024, 2048, 4096, 4352, 8192, 14336]:
                for k in [256, 512, 1024, 1536, 2048, 3072, 4096, 8192]:
                    one = max(estimate(chip, s, m, n, k)["tflops"]
                              for s in SCHEDULES
                              if s.cta_group == 1 and s.tile_n == 128 and
                              s.ok(chip, k))
                    two = estimate(chip, pair, m, n, k)["tflops"]
                    total += 1
                    if (two > one) == pair_rule(chip, m, n, k):
                        agree += 1
                    elif abs(two - one) <= 0.01 * max(one, two):
                        close += 1
    print(f"the CTA-pair rule agrees with the model on {agree} of {total} "
          f"shapes; {close} of the others are within 1%")


def main():
    global SMEM_BYTES_PER_CLK, MMA_READS_FREE
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shape", action="append",
                    help="MxNxK (repeatable); default: a decode, an FFN and "
                         "the 8192^3 of the published figures")
    ap.add_argument("--markdown", action="store_true",
                    help="print Markdown tables (bench/RESULTS.md)")
    ap.add_argument("--smem-bytes-per-clk", type=int,
                    default=128)
    ap.add_argument("--mma-reads-free", action="store_true",
                    help="the MMAs read shared memory without taking "
                         "bandwidth from the TMA")
    ap.add_argument("--check-rule", action="store_true",
                    help="compare the compiler's CTA-pair rule with the "
                         "model over a grid of shapes")
    args = ap.parse_args()
    if args.check_rule:
        check_rule()
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
                r = estimate(chip, s, m, n, k)
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
