#!/usr/bin/env python3
"""Data-parallel training of train.py's model (one arm) under torchrun:
DistributedDataParallel over the ranks, each rank --batch sequences of
every step (the global batch is --batch x ranks), nvfp4.torch's layers
quantizing each rank's activations and gradients with that rank's amaxes
(the weights are replicated: their amaxes agree without communication).

    torchrun --nproc_per_node=2 examples/training/train_ddp.py \\
        --kit examples/training/kit --arm nvfp4 --batch 32 --steps 300

The kit must hold the kernels of --batch x --context tokens (make_kit.py
--batch 32 for the line above). One GPU per rank with NCCL when there are
enough GPUs; otherwise every rank on GPU 0 with gloo (a check of the logic,
not a speed-up); --cpu runs the bf16 arm on the CPU with gloo. Rank 0
prints the mean training loss every --log-every steps and the validation
loss at the end; --out DIR also writes it to DIR/ddp-<arm>.json.
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import train  # noqa: E402  (the model, data, recipe and schedule)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    train.add_model_arguments(parser)
    parser.add_argument("--arm", default="nvfp4", choices=list(train.ARMS))
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--lr", type=float, default=1.5e-3)
    parser.add_argument("--min-lr-fraction", type=float, default=0.1)
    parser.add_argument("--warmup", type=float, default=0.03)
    parser.add_argument("--weight-decay", type=float, default=0.1)
    parser.add_argument("--clip", type=float, default=1.0)
    parser.add_argument("--log-every", type=int, default=10)
    parser.add_argument("--val-batches", type=int, default=8,
                        help="validation batches per rank at the end")
    parser.add_argument("--data", default=os.path.join(HERE, "data"))
    parser.add_argument("--kit", default=os.path.join(HERE, "kit"))
    parser.add_argument("--out", default=None)
    parser.add_argument("--cpu", action="store_true")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local = int(os.environ.get("LOCAL_RANK", rank))
    nvfp4 = train.ARMS[args.arm][1] is not None
    if args.cpu:
        if nvfp4:
            raise SystemExit(f"train_ddp.py: the {args.arm} arm needs a CUDA "
                             f"GPU; on the CPU run --arm bf16")
        device, backend = torch.device("cpu"), "gloo"
    else:
        if not torch.cuda.is_available():
            raise SystemExit("train_ddp.py: no CUDA device (--cpu for the "
                             "bf16 arm)")
        backend = "nccl" if torch.cuda.device_count() >= world else "gloo"
        device = torch.device("cuda", local if backend == "nccl" else 0)
        torch.cuda.set_device(device)
    dist.init_process_group(backend)
    say = print if rank == 0 else (lambda *a, **k: None)

    kit_cache = os.path.join(args.kit, "cache")
    if nvfp4:
        train.open_kit(args, device, kit_cache, [args.arm])
    corpus, _ = train.load_corpus(args.data)
    batches = train.Batches(corpus, args.context, args.batch, args.seed,
                            device)
    steps = min(args.steps, batches.train_steps // world)
    model = train.build_model(args, args.arm, device, kit_cache)
    ddp = DDP(model, device_ids=[device.index] if device.type == "cuda"
              else None)
    optimizer = train.make_optimizer(model, args, device)
    say(f"train_ddp: arm {args.arm}, {world} ranks ({backend} on "
        f"{device.type}), {args.batch} x {args.context} tokens per rank "
        f"and step, {steps} steps, "
        f"{len(train.nvfp4_layers(model))} NVFP4 layers", flush=True)

    import nvfp4.torch as nt
    history, start = [], time.perf_counter()
    total = torch.zeros((), device=device)
    for step in range(steps):
        nt.set_progress(model, step / steps)
        for group in optimizer.param_groups:
            group["lr"] = train.learning_rate(args, step, steps)
        # Global batch `step` is the ranks' consecutive shares.
        x, y = batches.train_batch(step * world + rank)
        with train.autocast(device):
            loss = ddp(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        total += loss.detach().float()
        if (step + 1) % args.log_every == 0 or step + 1 == steps:
            dist.all_reduce(total)
            count = args.log_every if (step + 1) % args.log_every == 0 \
                else (step + 1) % args.log_every
            mean = float(total) / (count * world)
            total.zero_()
            history.append({"step": step + 1, "train_loss": mean})
            say(f"step {step + 1:5d}  loss {mean:.4f}  "
                f"{time.perf_counter() - start:7.1f} s", flush=True)

    # Validation: each rank its share of the batches, averaged.
    count = min(args.val_batches, batches.val_batches // world)
    val = torch.zeros((), device=device)
    with torch.no_grad(), train.autocast(device):
        for i in range(count):
            x, y = batches.val_batch(i * world + rank)
            val += model(x, y).float()
    dist.all_reduce(val)
    val_loss = float(val) / max(count * world, 1)
    say(f"train_ddp: validation loss {val_loss:.4f} "
        f"({count * world} batches)", flush=True)
    if rank == 0 and args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, f"ddp-{args.arm}.json"), "w") as f:
            json.dump({"arm": args.arm, "ranks": world, "backend": backend,
                       "config": train.model_config(args), "steps": steps,
                       "history": history, "val_loss": val_loss}, f,
                      indent=1)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
