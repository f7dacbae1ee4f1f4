#!/usr/bin/env python3
"""Plain PyTorch, no nvfp4: which collectives FSDP2 needs work under the
gloo backend with both ranks' CUDA tensors on one GPU (issue 22: the FSDP2
section of torch_dist.py died with SIGSEGV in the backward's gradient
reduce-scatter there, after its forward checks had passed). One probe per
process group, so that a crash names its probe:

  for p in $(python3 integration_test/fsdp2_gloo_probe.py --list); do
    GLOO_SOCKET_IFNAME=lo python3 -m torch.distributed.run --nproc_per_node 2 \
      integration_test/fsdp2_gloo_probe.py $p; echo "$p: exit $?"; done

Probes: reduce_scatter_tensor of CUDA (or CPU) tensors with
SUM/AVG in fp32/bf16, all_gather_into_tensor, and fully_shard of a
torch.nn.Linear, forward and backward, on CUDA and on CPU.
"""
import os
import sys

import torch
import torch.distributed as dist


def reduce_scatter(device, dtype, op):
    world = dist.get_world_size()
    x = torch.arange(4 * world, dtype=torch.float32, device=device).to(dtype)
    x = x + dist.get_rank()
    out = torch.empty(4, dtype=dtype, device=device)
    dist.reduce_scatter_tensor(out, x, op=op)
    return out


def all_gather(device, dtype):
    x = torch.full((4,), dist.get_rank(), dtype=dtype, device=device)
    out = torch.empty(4 * dist.get_world_size(), dtype=dtype, device=device)
    dist.all_gather_into_tensor(out, x)
    return out


def fsdp2(device, dtype, full=False):
    try:
        from torch.distributed.fsdp import fully_shard
    except ImportError:  # older PyTorch
        from torch.distributed._composable.fsdp import fully_shard
    from torch.distributed.device_mesh import init_device_mesh
    mesh = init_device_mesh(device, (dist.get_world_size(),))
    torch.manual_seed(0)
    layer = torch.nn.Linear(64, 32, bias=False).to(device=device, dtype=dtype)
    fully_shard(layer, mesh=mesh)
    x = torch.randn(8, 64, device=device, dtype=dtype) + dist.get_rank()
    layer(x).float().square().sum().backward()
    grad = layer.weight.grad
    # full_tensor(): an all-gather through the functional collectives, as
    # torch_dist.py reads the gradient.
    return (grad.full_tensor() if full else grad.to_local()).float().norm()


PROBES = {
    "rs_sum_f32_cuda": lambda: reduce_scatter("cuda", torch.float32,
                                              dist.ReduceOp.SUM),
    "rs_sum_bf16_cuda": lambda: reduce_scatter("cuda", torch.bfloat16,
                                               dist.ReduceOp.SUM),
    "rs_avg_bf16_cuda": lambda: reduce_scatter("cuda", torch.bfloat16,
                                               dist.ReduceOp.AVG),
    "rs_sum_bf16_cpu": lambda: reduce_scatter("cpu", torch.bfloat16,
                                              dist.ReduceOp.SUM),
    "ag_bf16_cuda": lambda: all_gather("cuda", torch.bfloat16),
    "fsdp2_f32_cuda": lambda: fsdp2("cuda", torch.float32),
    "fsdp2_bf16_cuda": lambda: fsdp2("cuda", torch.bfloat16),
    "fsdp2_bf16_cuda_full": lambda: fsdp2("cuda", torch.bfloat16, True),
    "fsdp2_f32_cpu": lambda: fsdp2("cpu", torch.float32),
}


def main():
    if sys.argv[1:] == ["--list"]:
        print(" ".join(PROBES))
        return
    if len(sys.argv) != 2 or sys.argv[1] not in PROBES:
        sys.exit("usage: torchrun --nproc_per_node 2 fsdp2_gloo_probe.py "
                 "PROBE, PROBE one of " + ", ".join(PROBES))
    name = sys.argv[1]
    dist.init_process_group("gloo")
    if torch.cuda.is_available():
        torch.cuda.set_device(0)  # both ranks on the one GPU
    try:
        result = PROBES[name]()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        text = f"ok ({result.tolist() if result.dim() else float(result)})"
    except Exception as error:  # a Python-level failure, not a crash
        text = f"error: {type(error).__name__}: {str(error).splitlines()[0]}"
    if dist.get_rank() == 0:
        print(f"probe {name}: {text}", flush=True)
    dist.destroy_process_group()
    os._exit(0 if text.startswith("ok") else 1)


if __name__ == "__main__":
    main()
