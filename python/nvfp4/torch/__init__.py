"""PyTorch training through nvfp4's kernels (PyTorch is an optional
dependency of nvfp4; this module needs it).

    import nvfp4.torch as nt
    recipe = nt.Recipe(keep_first=1, keep_last=1)        # the NVFP4 recipe
    model = nt.convert(model, recipe)    # eligible nn.Linear -> nt.Linear
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(x).loss
    loss.backward()

``Linear`` is a drop-in ``torch.nn.Linear`` (same parameters, same
initialization; BF16 parameters unless ``dtype`` says otherwise, FP32 master
weights work too) whose forward and backward run the kernels nvfp4 compiled
for the GPU: the fprop GEMM X W^T, dgrad dY W and wgrad dY^T X, each
operand quantized as ``nvfp4-apply-recipe`` assigns it (docs/Numerics.md
section 7: 16x16 weight blocks, stochastic rounding of the gradients, the
Random Hadamard Transform on both wgrad operands along the tokens). The
layer's graph is annotated model IR (``nvfp4.layer_kernels``) that goes
through nvfp4-assign-precision, nvfp4-apply-recipe and
nvfp4-fuse-quantization and nvfp4-compile; kernels are compiled once per
shape, recipe and chip and cached on disk (``$NVFP4_CACHE_DIR``, default
``~/.cache/nvfp4``). The bias add and its gradient stay in PyTorch.

``convert(model, recipe)`` swaps ``nn.Linear`` layers by the compiler's
per-layer policy (``nvfp4-assign-precision``: the first ``keep_first`` and
last ``keep_last`` transformer blocks and layers outside the blocks stay
BF16). Blocks are the entries of the model's longest ``nn.ModuleList`` of
identical modules; a layer whose module path names attention (``attn``,
``q_proj``, ...) has kind "attention", any other "ffn".

``Recipe(formats=...)`` picks the block-scaled format per layer kind, as
``nvfp4-assign-precision formats=`` (``{"attention": "mxfp8", "ffn":
"nvfp4"}``: MXFP8 attention projections and NVFP4 FFN layers; ``"mxfp4"``:
every layer MXFP4). A layer in an MX format quantizes both operands of its
three GEMMs in 1x32 blocks with E8M0 scales, round to nearest
(docs/Numerics.md section 11); its features and tokens must be multiples of
32.

The recipe's knobs are TransformerEngine's: ``rht``, ``stochastic_rounding``,
``weight_2d`` (they apply to the NVFP4 layers), and ``bf16_after_fraction``: once the training loop reports
``recipe.set_progress(fraction)`` at or past it, every layer computes in
BF16 (the paper's switch for the last part of training).

Works under ``torch.autocast(dtype=torch.bfloat16)``, with gradient
accumulation (gradients add up in ``.grad`` as usual) and with
``torch.compile``, which sees the layer's GEMMs as the opaque custom ops
``nvfp4::linear_forward`` / ``nvfp4::linear_backward`` (PyTorch 2.4 and
newer; older versions use an autograd.Function).
"""
import threading
import weakref
import zlib

import torch
import torch.nn.functional as F

from .. import layer_kernels as _lk

__all__ = ["Linear", "Recipe", "convert", "load_checkpoint", "prepare",
           "set_progress"]

_BF16 = torch.bfloat16


class Recipe:
    """The NVFP4 training recipe of a model's linear layers.

    rht, stochastic_rounding, weight_2d: nvfp4-apply-recipe's knobs (the
        Random Hadamard Transform on the wgrad operands, stochastic rounding
        of the gradient operands, 16x16 weight blocks).
    keep_first, keep_last: transformer blocks kept in BF16 by convert()
        (None: nvfp4-assign-precision's defaults).
    bf16_after_fraction: the late switch; every layer computes in BF16 once
        set_progress() reports a fraction of training at or past it (None:
        never).
    keep_kinds: nvfp4.kind values kept in BF16 (None: the pass's default,
        the attention BMMs, embeddings and heads).
    seed: base of the per-layer, per-step stochastic-rounding seeds.
    cache_dir: where compiled kernels live (None: $NVFP4_CACHE_DIR or
        ~/.cache/nvfp4).
    formats: the format per layer kind for convert() (nvfp4-assign-
        precision's formats=: a dict {kind: format}, the kind None or ""
        the default, or a str "attention=mxfp8,ffn=nvfp4"; formats
        "nvfp4", "mxfp8", "mxfp4", "bf16"). None: NVFP4 for every kind.
    mxfp8_gradients: the elements of the MXFP8 layers' gradient operands
        (dY, dY^T): "e4m3" (TE's MXFP8 default) or "e5m2" (TE's HYBRID).
    """

    def __init__(self, rht=True, stochastic_rounding=True, weight_2d=True,
                 keep_first=None, keep_last=None, bf16_after_fraction=None,
                 keep_kinds=None, seed=0, cache_dir=None, formats=None,
                 mxfp8_gradients="e4m3"):
        for name, value in (("keep_first", keep_first),
                            ("keep_last", keep_last)):
            if value is not None and (isinstance(value, bool) or
                                      not isinstance(value, int) or
                                      value < 0):
                raise ValueError(f"{name} must be a non-negative int or None")
        if bf16_after_fraction is not None and not (
                0.0 <= float(bf16_after_fraction) <= 1.0):
            raise ValueError("bf16_after_fraction must be in [0, 1] or None")
        self.options = _lk.RecipeOptions(rht, stochastic_rounding, weight_2d,
                                         mxfp8_gradients=mxfp8_gradients)
        self.formats = _lk.format_entries(formats)
        self.keep_first = keep_first
        self.keep_last = keep_last
        self.bf16_after_fraction = (None if bf16_after_fraction is None
                                    else float(bf16_after_fraction))
        self.keep_kinds = None if keep_kinds is None else list(keep_kinds)
        self.seed = int(seed) & ((1 << 64) - 1)
        self.cache = _lk.KernelCache(cache_dir)
        self.progress = 0.0

    rht = property(lambda self: self.options.rht)
    stochastic_rounding = property(
        lambda self: self.options.stochastic_rounding)
    weight_2d = property(lambda self: self.options.weight_2d)

    def set_progress(self, fraction):
        """The fraction of training done (for bf16_after_fraction)."""
        self.progress = float(fraction)

    @property
    def bf16_now(self):
        """True once the late switch to BF16 is due."""
        return (self.bf16_after_fraction is not None and
                self.progress >= self.bf16_after_fraction)

    def __repr__(self):
        formats = f", formats={','.join(self.formats)!r}" if self.formats \
            else ""
        if self.options.mxfp8_gradients != "e4m3":
            formats += f", mxfp8_gradients={self.options.mxfp8_gradients!r}"
        return (f"Recipe(rht={self.rht}, stochastic_rounding="
                f"{self.stochastic_rounding}, weight_2d={self.weight_2d}, "
                f"keep_first={self.keep_first}, keep_last={self.keep_last}, "
                f"bf16_after_fraction={self.bf16_after_fraction}{formats})")


def set_progress(model, fraction):
    """recipe.set_progress(fraction) for the recipe of every nvfp4 Linear
    of `model`."""
    for module in model.modules():
        if isinstance(module, Linear):
            module.recipe.set_progress(fraction)


# Layers by id for the custom ops (which take plain ints).
_layers = {}
_layers_lock = threading.Lock()
_next_id = [0]


def _register(layer):
    with _layers_lock:
        _next_id[0] += 1
        _layers[_next_id[0]] = weakref.ref(layer)
        return _next_id[0]


def _layer(layer_id):
    layer = _layers.get(layer_id, lambda: None)()
    if layer is None:
        raise RuntimeError(f"nvfp4.torch: layer {layer_id} no longer exists")
    return layer


def _stream(device):
    return torch.cuda.current_stream(device).cuda_stream


# One scratch workspace per device and stream, shared by every layer and
# grown to the largest launch: a stream runs its launches in order, so the
# layers take turns in it, and each launcher sees the same workspace address
# every step, so the tensor maps of its GEMMs (which point into the
# workspace) are encoded and uploaded once instead of after every new
# allocation. (A buffer replaced by a larger one goes back to PyTorch's
# caching allocator, which reuses it in the order of the same stream.)
_workspaces = {}
_workspaces_lock = threading.Lock()


def _workspace(kernels, phase, device, layer):
    size = max(kernels.workspace_bytes(phase), 1)
    if layer.keep_workspaces:  # a test reads this launch's scratch later
        return torch.empty(size, dtype=torch.uint8, device=device)
    key = (device.index, torch.cuda.current_stream(device).cuda_stream)
    with _workspaces_lock:
        buffer = _workspaces.get(key)
        if buffer is None or buffer.numel() < size:
            buffer = torch.empty(size, dtype=torch.uint8, device=device)
            _workspaces[key] = buffer
    return buffer


# The host-function arguments whose tensor is a shard split along features
# (not tokens) under each tensor-parallel split, by phase: their amaxes are
# max-reduced over the group. forward(x, w): a column split (W split along
# out) shards w; a row split (W split along in) shards w and x's features.
# backward(dy, wt, dyt, xt): column shards dY's features (dy, dyt) and W^T;
# row shards W^T and X^T's features.
_SHARDED = {("forward", "column"): (1,), ("forward", "row"): (0, 1),
            ("backward", "column"): (0, 1, 2), ("backward", "row"): (1, 3)}


def _launch(layer, kernels, phase, workspace, launch):
    """Runs launch(sharded, reduce) with the amax reduction of the layer's
    tensor-parallel split, or launch() without one."""
    mode, group = layer._split
    if mode is None or not layer.reduce_amax:
        return launch()
    sharded = _SHARDED[(phase, mode)]

    def reduce(offsets):
        index = layer._amax_index.get((phase, tuple(offsets)))
        if index is None or index.device != workspace.device:
            index = torch.tensor([o // 4 for o in offsets], dtype=torch.long,
                                 device=workspace.device)
            layer._amax_index[(phase, tuple(offsets))] = index
        words = workspace.narrow(0, 0, workspace.numel() // 4 * 4).view(
            torch.int32)
        # int32 bits of non-negative FP32 amaxes: the int max is the max.
        values = words.index_select(0, index)
        work = torch.distributed.all_reduce(
            values, op=torch.distributed.ReduceOp.MAX, group=group,
            async_op=True)
        layer.amax_reductions += 1

        def finish():
            work.wait()
            words.index_copy_(0, index, values)
        return finish

    return launch(sharded, reduce)


def _forward_impl(x, w, layer_id):
    layer = _layer(layer_id)
    kernels = layer._kernels_for(x.shape[0], x.device)
    y = torch.empty((x.shape[0], w.shape[0]), dtype=_BF16, device=x.device)
    workspace = _workspace(kernels, "forward", x.device, layer)
    stream = _stream(x.device)
    _launch(layer, kernels, "forward", workspace,
            lambda *split: kernels.forward(x, w, y, stream, workspace,
                                           *split))
    layer._keep("forward", workspace, kernels)
    return y


def _backward_impl(dy, x, w, layer_id):
    layer = _layer(layer_id)
    kernels = layer._kernels_for(x.shape[0], x.device)
    dy = dy.to(_BF16).contiguous()
    # W^T of the weight this step's forward saw, transposed every step: a
    # copy cached across steps goes stale whenever an update bypasses the
    # version counter (a .data write), and the transpose costs ~2 MB of
    # copying against the layer's GEMMs.
    wt = w.t().contiguous()
    dyt = dy.t().contiguous()
    xt = x.t().contiguous()
    dx = torch.empty_like(x)
    dw = torch.empty_like(w)
    workspace = _workspace(kernels, "backward", x.device, layer)
    seed, stream = layer._next_seed(), _stream(x.device)
    _launch(layer, kernels, "backward", workspace,
            lambda *split: kernels.backward(dy, wt, dyt, xt, seed, dx, dw,
                                            stream, workspace, *split))
    layer._keep("backward", workspace, kernels)
    return dx, dw


_custom_ops = hasattr(torch, "library") and hasattr(torch.library,
                                                    "custom_op")
if _custom_ops:
    @torch.library.custom_op("nvfp4::linear_forward", mutates_args=())
    def _linear_forward(x: torch.Tensor, w: torch.Tensor,
                        layer_id: int) -> torch.Tensor:
        return _forward_impl(x, w, layer_id)

    @_linear_forward.register_fake
    def _(x, w, layer_id):
        return x.new_empty((x.shape[0], w.shape[0]))

    @torch.library.custom_op("nvfp4::linear_backward", mutates_args=())
    def _linear_backward(dy: torch.Tensor, x: torch.Tensor, w: torch.Tensor,
                         layer_id: int) -> tuple[torch.Tensor, torch.Tensor]:
        return _backward_impl(dy, x, w, layer_id)

    @_linear_backward.register_fake
    def _(dy, x, w, layer_id):
        return torch.empty_like(x), torch.empty_like(w)

    def _setup_context(ctx, inputs, output):
        x, w, layer_id = inputs
        ctx.save_for_backward(x, w)
        ctx.layer_id = layer_id

    def _backward(ctx, dy):
        x, w = ctx.saved_tensors
        dx, dw = torch.ops.nvfp4.linear_backward(dy, x, w, ctx.layer_id)
        return dx, dw, None

    _linear_forward.register_autograd(_backward, setup_context=_setup_context)

    def _nvfp4_linear(x, w, layer_id):
        return torch.ops.nvfp4.linear_forward(x, w, layer_id)
else:
    class _LinearFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, layer_id):
            ctx.save_for_backward(x, w)
            ctx.layer_id = layer_id
            return _forward_impl(x, w, layer_id)

        @staticmethod
        def backward(ctx, dy):
            x, w = ctx.saved_tensors
            dx, dw = _backward_impl(dy, x, w, ctx.layer_id)
            return dx, dw, None

    def _nvfp4_linear(x, w, layer_id):
        return _LinearFunction.apply(x, w, layer_id)


if hasattr(torch, "get_autocast_dtype"):  # PyTorch 2.4 and newer
    def _autocast_dtype():
        """The CUDA autocast dtype when autocast is on, else None."""
        if not torch.is_autocast_enabled("cuda"):
            return None
        return torch.get_autocast_dtype("cuda")
else:
    def _autocast_dtype():
        if not torch.is_autocast_enabled():
            return None
        return torch.get_autocast_gpu_dtype()


_dtensor_module = []


def _dtensor():
    """torch.distributed.tensor (DTensor, Shard, Replicate, Partial), or
    None where PyTorch has none."""
    if not _dtensor_module:
        try:
            import torch.distributed.tensor as dt
            dt.DTensor, dt.Shard, dt.Replicate, dt.Partial  # noqa: B018
        except (ImportError, AttributeError):
            dt = None
        _dtensor_module.append(dt)
    return _dtensor_module[0]


_PARALLEL = (None, "column", "row")


def _check_split(parallel, process_group):
    if parallel not in _PARALLEL:
        raise ValueError(f"nvfp4.torch.Linear: parallel = {parallel!r}; "
                         f"expected None, 'column' (the weight split along "
                         f"out_features) or 'row' (along in_features)")
    if process_group is not None and parallel is None:
        raise ValueError("nvfp4.torch.Linear: a process_group without "
                         "parallel='column' or 'row': say how the weight "
                         "is split across it (a replicated weight, as under "
                         "DistributedDataParallel, needs no group)")


class Linear(torch.nn.Linear):
    """A drop-in torch.nn.Linear whose GEMMs run in NVFP4 (see the module
    docstring). in_features and out_features must be multiples of 16 (the
    K of the fprop and dgrad GEMMs), and so must the number of tokens (all
    input dimensions but the last: the K of wgrad) of each call; 32 for a
    layer in an MX format (format="mxfp8" or "mxfp4").

    Tensor parallelism: a layer holding one rank's shard of a larger
    weight says so with parallel="column" (its out_features are a slice of
    the whole layer's) or "row" (its in_features, and its input's features,
    are a slice) and process_group (default: the world); the amaxes of the
    sharded operands are then max-reduced over the group before they are
    quantized, so every rank encodes with the whole tensor's scale (the
    caller moves the activations, as for nn.Linear). A DTensor weight
    (parallelize_module's ColwiseParallel / RowwiseParallel) is detected:
    Shard(0) is a column split, Shard(1) a row split over its mesh
    dimension's group. Replicated weights (DistributedDataParallel) and
    weights FSDP2 all-gathers before the forward need nothing."""

    def __init__(self, in_features, out_features, bias=True, recipe=None,
                 device=None, dtype=None, process_group=None,
                 parallel=None, format="nvfp4"):
        block = _lk.block_of(format)
        for name, value in (("in_features", in_features),
                            ("out_features", out_features)):
            if isinstance(value, bool) or not isinstance(value, int) or \
                    value <= 0 or value % block:
                role = "fprop" if name == "in_features" else "dgrad"
                raise ValueError(
                    f"nvfp4.torch.Linear: {name} = {value}; "
                    f"{format.upper()} needs a positive multiple of {block} "
                    f"(it is K of the {role} GEMM, quantized in blocks of "
                    f"{block}): keep this layer an nn.Linear")
        super().__init__(in_features, out_features, bias=bias, device=device,
                         dtype=_BF16 if dtype is None else dtype)
        if self.weight.dtype not in (_BF16, torch.float32):
            raise ValueError(f"nvfp4.torch.Linear: parameters must be "
                             f"bfloat16 or float32, not {self.weight.dtype}")
        self.recipe = recipe if recipe is not None else Recipe()
        self.format = format
        self.layer_name = ""
        self._id = _register(self)
        self._kernels = {}
        self._seed_base = None
        self._steps = 0
        self.keep_workspaces = False  # tests: keep the last workspaces
        self.last_workspaces = {}
        _check_split(parallel, process_group)
        self._init_split(process_group, parallel)

    def _init_split(self, process_group, parallel):
        self.process_group = process_group
        self.parallel = parallel
        # False: quantize shards with their own amaxes (tests show the
        # difference this makes).
        self.reduce_amax = True
        self.amax_reductions = 0  # all-reduces issued (tests, logs)
        self._split = (None, None)  # (mode, group) of the current call
        self._local_features = (self.in_features, self.out_features)
        self._amax_index = {}

    @classmethod
    def from_linear(cls, linear, recipe, name="", format="nvfp4"):
        """An nvfp4 Linear sharing `linear`'s parameters (so an optimizer
        built before still updates them), in `format` ("nvfp4", "mxfp8" or
        "mxfp4")."""
        _lk.block_of(format)
        layer = cls.__new__(cls)
        torch.nn.Module.__init__(layer)
        layer.in_features = linear.in_features
        layer.out_features = linear.out_features
        layer.weight = linear.weight
        layer.bias = linear.bias
        layer.recipe = recipe
        layer.format = format
        layer.layer_name = name
        layer._id = _register(layer)
        layer._kernels = {}
        layer._seed_base = None
        layer._steps = 0
        layer.keep_workspaces = False
        layer.last_workspaces = {}
        layer._init_split(None, None)
        return layer

    def extra_repr(self):
        split = f", parallel={self.parallel!r}" if self.parallel else ""
        fmt = f", format={self.format!r}" if self.format != "nvfp4" else ""
        return super().extra_repr() + fmt + f", recipe={self.recipe!r}" + \
            split

    @property
    def options(self):
        """The RecipeOptions of this layer's kernels: the recipe's knobs in
        the layer's format."""
        options = self.recipe.options
        return options if self.format == "nvfp4" else \
            options.with_format(self.format)

    # -- kernels ------------------------------------------------------------

    def _kernels_for(self, tokens, device):
        in_features, out_features = self._local_features
        key = (tokens, in_features, out_features, device.index)
        kernels = self._kernels.get(key)
        if kernels is None:
            shape = _lk.LayerShape(tokens, in_features, out_features)
            chip = _lk.chip_of_capability(
                *torch.cuda.get_device_capability(device))
            kernels = _lk.LayerKernels(shape, self.options, chip,
                                       device.index or 0, self.recipe.cache)
            self._kernels[key] = kernels
        return kernels

    def _next_seed(self):
        if self._seed_base is None:
            self._seed_base = _lk.derive_stream_seed(
                self.recipe.seed, zlib.crc32(self.layer_name.encode()))
            # Each rank its own rounding noise: ranks that round their
            # batches' gradients with the same random numbers would add
            # correlated noise to the averaged gradient.
            distributed = torch.distributed
            if distributed.is_available() and distributed.is_initialized() \
                    and distributed.get_world_size() > 1:
                self._seed_base = _lk.derive_stream_seed(
                    self._seed_base, (1 << 32) + distributed.get_rank())
        self._steps += 1
        return _lk.derive_stream_seed(self._seed_base, self._steps)

    def _keep(self, phase, workspace, kernels):
        if self.keep_workspaces:
            self.last_workspaces[phase] = (workspace, kernels)

    # -- forward ------------------------------------------------------------

    def forward(self, x):
        if self.recipe.bf16_now:
            return F.linear(x, self.weight, self.bias)
        dt = _dtensor()
        if dt is not None and isinstance(self.weight, dt.DTensor):
            return self._forward_dtensor(x, dt)
        y = self._forward_local(x, self.weight, *self._resolve_split())
        if self.bias is not None:
            y = y + self.bias.to(y.dtype)
        return y

    def _resolve_split(self):
        """(mode, group) of a plain-tensor weight: parallel and
        process_group (the world when none is given)."""
        if self.parallel is None:
            return None, None
        if not (torch.distributed.is_available() and
                torch.distributed.is_initialized()):
            raise RuntimeError(f"nvfp4.torch.Linear(parallel="
                               f"{self.parallel!r}) needs an initialized "
                               f"torch.distributed process group")
        group = self.process_group
        return self.parallel, (torch.distributed.group.WORLD
                               if group is None else group)

    def _forward_dtensor(self, x, dt):
        """The layer on DTensors (tensor parallelism by parallelize_module):
        the local GEMMs on the local shards, the amaxes of the sharded
        operands reduced over the sharded mesh dimension's group."""
        w = self.weight
        mesh = w.device_mesh
        mode, dim = None, None
        for i, placement in enumerate(w.placements):
            if placement.is_shard():
                if mode is not None:
                    raise ValueError("nvfp4.torch.Linear: the weight is "
                                     "sharded over more than one mesh "
                                     "dimension")
                mode, dim = ("column" if placement.dim % 2 == 0 else "row",
                             i)
            elif not placement.is_replicate():
                raise ValueError(f"nvfp4.torch.Linear: weight placement "
                                 f"{placement} is not supported (Shard(0), "
                                 f"Shard(1) or Replicate)")
        if not isinstance(x, dt.DTensor):
            raise ValueError("nvfp4.torch.Linear: the weight is a DTensor "
                             "but the input is not (parallelize_module's "
                             "ColwiseParallel / RowwiseParallel make it one)")
        want = list(x.placements)  # X replicated (column) / split (row)
        if mode == "column":
            want[dim] = dt.Replicate()
        elif mode == "row":
            want[dim] = dt.Shard(x.dim() - 1)
        if list(x.placements) != want:
            x = x.redistribute(mesh, want)
        grad = list(want)
        if mode == "column":  # each rank's dX is a partial sum
            grad[dim] = dt.Partial()
        x_local = x.to_local(grad_placements=grad)
        group = mesh.get_group(dim) if mode is not None else None
        y = self._forward_local(x_local, w.to_local(), mode, group)
        out = list(want)
        if mode == "column":
            out[dim] = dt.Shard(y.dim() - 1)
            if self.bias is not None:
                y = y + self.bias.to_local().to(y.dtype)
        elif mode == "row":
            out[dim] = dt.Partial()
        elif self.bias is not None:
            y = y + self.bias.to_local().to(y.dtype)
        y = dt.DTensor.from_local(y, mesh, out, run_check=False)
        if mode == "row" and self.bias is not None:
            y = y + self.bias.to(y.dtype)
        return y

    def _forward_local(self, x, weight, mode, group):
        """The NVFP4 GEMMs of this rank on its tensors (no bias)."""
        in_features, out_features = weight.shape[1], weight.shape[0]
        autocast = _autocast_dtype()
        if autocast is not None and autocast != _BF16:
            raise ValueError(f"nvfp4.torch.Linear computes in bfloat16; "
                             f"autocast to {autocast} is not supported (use "
                             f"torch.autocast(dtype=torch.bfloat16))")
        if autocast is None and x.dtype != _BF16:
            raise ValueError(f"nvfp4.torch.Linear: the input is {x.dtype}; "
                             f"the layer computes in bfloat16: pass bfloat16 "
                             f"input or run under torch.autocast(dtype="
                             f"torch.bfloat16)")
        if x.dim() < 1 or x.shape[-1] != in_features:
            raise ValueError(f"nvfp4.torch.Linear: input shape "
                             f"{tuple(x.shape)} does not end in in_features "
                             f"= {in_features}")
        block, name_of = _lk.block_of(self.format), self.format.upper()
        for name, value in (("in_features", in_features),
                            ("out_features", out_features)):
            if value % block:
                raise ValueError(f"nvfp4.torch.Linear: this rank's shard "
                                 f"has {name} = {value}; {name_of} needs a "
                                 f"multiple of {block} per rank")
        tokens = x.numel() // in_features
        if tokens == 0 or tokens % block:
            raise ValueError(f"nvfp4.torch.Linear: {tokens} tokens (the "
                             f"input's leading dimensions); {name_of} needs "
                             f"a positive multiple of {block} (the tokens "
                             f"are K of the wgrad GEMM)")
        if x.device.type != "cuda":
            raise ValueError(f"nvfp4.torch.Linear runs on CUDA tensors; the "
                             f"input is on {x.device}")
        if weight.device != x.device:
            raise ValueError(f"nvfp4.torch.Linear: the input is on "
                             f"{x.device}, the weight on "
                             f"{weight.device}")
        x2d = x.reshape(tokens, in_features).to(_BF16).contiguous()
        w = weight if weight.dtype == _BF16 else weight.to(_BF16)
        # Read by this call's forward and backward launches.
        self._split = (mode, group)
        self._local_features = (in_features, out_features)
        with torch.autocast("cuda", enabled=False):
            y = _nvfp4_linear(x2d, w, self._id)
        return y.reshape(*x.shape[:-1], out_features)


_ATTENTION_WORDS = ("attn", "attention", "q_proj", "k_proj", "v_proj",
                    "o_proj", "qkv", "query", "key", "value")


def _blocks(model):
    """The model's transformer blocks: the longest nn.ModuleList (or
    Sequential) of at least two modules of one type; {module: index}."""
    best = []
    for module in model.modules():
        if isinstance(module, (torch.nn.ModuleList, torch.nn.Sequential)):
            children = list(module.children())
            if len(children) >= 2 and len({type(c) for c in children}) == 1 \
                    and any(isinstance(m, torch.nn.Linear)
                            for c in children for m in c.modules()) \
                    and len(children) > len(best):
                best = children
    return {block: i for i, block in enumerate(best)}


def convert(model, recipe=None):
    """Replaces the eligible nn.Linear layers of `model` (in place; returns
    it) with nvfp4 Linear layers sharing their parameters, by the compiler's
    per-layer policy (nvfp4-assign-precision with the recipe's keep_first,
    keep_last, keep_kinds and formats; each layer gets the format the
    policy gives it). Layers with in or out features not a multiple of 16
    stay nn.Linear, and so do those the policy keeps in BF16 (an MX format
    keeps features that are not a multiple of 32 in BF16)."""
    recipe = recipe if recipe is not None else Recipe()
    blocks = _blocks(model)
    candidates = []
    for name, module in model.named_modules():
        if type(module) is not torch.nn.Linear:
            continue
        block = None
        for owner, index in blocks.items():
            if any(m is module for m in owner.modules()):
                block = index
                break
        words = name.lower().split(".")
        kind = "attention" if any(w in part for part in words
                                  for w in _ATTENTION_WORDS) else "ffn"
        if block is None:
            kind = "head"
        candidates.append((name, module, block, kind))
    shaped = [c for c in candidates
              if c[1].in_features % 16 == 0 and c[1].out_features % 16 == 0]
    decisions = _lk.layer_formats(
        [(block, kind, m.in_features, m.out_features)
         for _, m, block, kind in shaped],
        recipe.keep_first, recipe.keep_last, recipe.keep_kinds,
        recipe.formats, recipe.cache)
    for (name, module, _, _), layer_format in zip(shaped, decisions):
        if layer_format is None:
            continue
        parent = model
        *path, leaf = name.split(".")
        for part in path:
            parent = getattr(parent, part)
        setattr(parent, leaf, Linear.from_linear(module, recipe, name,
                                                 layer_format))
    return model


def prepare(model, tokens, chip="sm_90a", tp_plan=None, tp_degree=1):
    """Compiles the kernels of every nvfp4 Linear of `model` for `tokens`
    tokens per call on `chip` into each recipe's cache, without a GPU (a
    GPU machine without the compiler then finds them there). Returns the
    number of distinct layer kernels.

    Data parallel: `tokens` is one rank's. Tensor parallel through
    parallelize_module: `tp_plan` maps module names (fnmatch patterns, as
    parallelize_module's plan) to "column" or "row", and the layers it
    names get the kernels of their shard over `tp_degree` ranks."""
    import fnmatch
    plan = dict(tp_plan or {})
    for name, split in plan.items():
        if split not in ("column", "row"):
            raise ValueError(f"prepare: tp_plan[{name!r}] = {split!r}; "
                             f"expected 'column' or 'row'")
    seen = set()
    for name, module in model.named_modules():
        if isinstance(module, Linear):
            k, n = module.in_features, module.out_features
            split = next((v for pattern, v in plan.items()
                          if fnmatch.fnmatchcase(name, pattern)), None)
            if split is not None:
                extent = n if split == "column" else k
                block = _lk.block_of(module.format)
                if extent % (block * tp_degree):
                    raise ValueError(
                        f"prepare: {name}: a {split} split of {extent} "
                        f"features over {tp_degree} ranks leaves shards "
                        f"that are not multiples of {block}")
                if split == "column":
                    n //= tp_degree
                else:
                    k //= tp_degree
            shape = _lk.LayerShape(tokens, k, n)
            key = (shape, module.options, module.recipe.cache.directory)
            if key not in seen:
                seen.add(key)
                _lk.compile_layer(shape, module.options, chip,
                                  module.recipe.cache)
    return len(seen)


def load_checkpoint(model, checkpoint_dir, strict=True):
    """Loads an NVFP4 checkpoint directory (ModelOpt layout,
    docs/Checkpoints.md) into `model` for reference inference: NVFP4
    weights decoded exactly (nvfp4.checkpoint.dequantized_state_dict), then
    cast to each parameter's dtype, the other tensors as stored. Returns
    load_state_dict's result. The layers then compute in their own
    precision; running the checkpoint's NVFP4 GEMMs through the compiled
    kernels is not wired up yet."""
    from .. import checkpoint as _checkpoint
    state = _checkpoint.dequantized_state_dict(checkpoint_dir)
    own = model.state_dict()
    tensors = {}
    for name, array in state.items():
        tensor = torch.from_numpy(array)
        if name in own:
            tensor = tensor.to(own[name].dtype)
        tensors[name] = tensor
    return model.load_state_dict(tensors, strict=strict)
