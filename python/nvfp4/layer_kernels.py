"""The kernels of one NVFP4 linear layer, compiled by nvfp4 and cached on disk.

This is the framework-independent half of ``nvfp4.torch`` (it needs neither
PyTorch nor a GPU to write IR, compile and cache; running needs the runtime,
``nvfp4_runtime``). A linear layer ``Y = X W^T`` on ``T`` tokens
(``X: [T, in]``, ``W: [out, in]``) is written as annotated model IR, two
host functions:

- ``forward(x, w) -> y``: the fprop GEMM;
- ``backward(dy, wt, dyt, xt, seed) -> (dx, dw)``: dgrad ``dX = dY W`` as
  ``dY (W^T)^T`` and wgrad ``dW = dY^T X`` as ``(dY^T) (X^T)^T``, with the
  transposed operands given (the GPU lowering has no transpose kernel for
  BF16 tensors; the framework transposes) and ``seed`` the step's
  stochastic-rounding seed.

Each goes through ``nvfp4-assign-precision``, ``nvfp4-apply-recipe`` (with
the recipe's knobs: RHT, stochastic rounding, 2D weight blocks) and
``nvfp4-fuse-quantization`` in ``nvfp4-opt``, then ``nvfp4-compile`` for the
chip; the kernel image and manifest are kept in a cache directory keyed by
the IR, the options and the chip, so a shape is compiled once per chip.
A machine without the compiler (a GPU machine with only the runtime) uses a
cache prepared elsewhere.

``layer_policy`` asks ``nvfp4-assign-precision`` which layers of a model are
NVFP4, ``layer_formats`` which format each layer takes under a per-kind
``formats`` policy (``nvfp4.torch.convert`` uses it).

A layer can also run in an MX format (``RecipeOptions(format="mxfp8")`` or
``"mxfp4"``): the same two functions, assigned that format, so that
``nvfp4-apply-recipe`` quantizes both operands of all three GEMMs in 1x32
E8M0-scaled blocks (docs/Numerics.md section 11; the recipe's RHT,
stochastic rounding and 16x16 knobs are NVFP4's); every extent must then
be a multiple of 32.
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile

__all__ = ["RecipeOptions", "LayerShape", "CompilerUnavailable",
           "KernelCache", "LayerKernels", "forward_ir", "backward_ir",
           "layer_ir", "layer_policy", "layer_formats", "format_entries",
           "block_of", "default_cache_dir", "find_tool",
           "chip_of_capability", "derive_stream_seed", "launch_plan",
           "LAYER_FORMATS"]

# Bumped when the IR written here or the cache layout changes.
CACHE_FORMAT = 1
# The backward function's seed argument.
SEED_ARGUMENT = 4


class CompilerUnavailable(RuntimeError):
    """A kernel is not in the cache and nvfp4-opt / nvfp4-compile cannot be
    found to compile it."""


# The block-scaled formats a layer's GEMMs can take (nvfp4-assign-precision's
# format names) and the block along K each quantizes in.
LAYER_FORMATS = {"nvfp4": 16, "mxfp8": 32, "mxfp4": 32}


def block_of(layer_format):
    """The quantization block along K of a layer format (16 or 32)."""
    block = LAYER_FORMATS.get(layer_format)
    if block is None:
        raise ValueError(f"format {layer_format!r}: a layer format is one of "
                         f"{', '.join(LAYER_FORMATS)}")
    return block


def format_entries(formats):
    """formats= (of nvfp4.compile, nvfp4.torch.Recipe, layer_formats) as
    nvfp4-assign-precision's KIND=FORMAT entries: None (no entry), a dict
    {kind: format} (the kind None or "" sets the default), a str
    "kind=format,..." or a list of such entries."""
    if formats is None:
        return []
    if isinstance(formats, str):
        return [entry for entry in formats.split(",") if entry.strip()]
    if isinstance(formats, dict):
        entries = []
        for kind, name in formats.items():
            if kind is not None and not isinstance(kind, str):
                raise ValueError("formats: a kind must be a str or None (the "
                                 "default), got {!r}".format(kind))
            if not isinstance(name, str):
                raise ValueError("formats: the format of {!r} must be a str, "
                                 "got {!r}".format(kind, name))
            entries.append(name if not kind else "{}={}".format(kind, name))
        return entries
    if isinstance(formats, (list, tuple)) and all(
            isinstance(entry, str) for entry in formats):
        return list(formats)
    raise ValueError("formats must be None, a dict {{kind: format}}, a str "
                     "'kind=format,...' or a list of such entries, got "
                     "{!r}".format(formats))


class RecipeOptions:
    """The nvfp4-apply-recipe knobs of one layer's kernels, and the layer's
    format: "nvfp4" (the recipe of docs/Numerics.md section 7), "mxfp8" or
    "mxfp4" (section 11: both operands of every GEMM in that MX format,
    1x32 along K, round to nearest, no RHT; the NVFP4 knobs do not apply).
    mxfp8_gradients: the elements of an MXFP8 layer's gradient operands
    (dY of dgrad, dY^T of wgrad): "e4m3" (TE's MXFP8 default) or "e5m2"
    (TE's HYBRID)."""

    __slots__ = ("rht", "stochastic_rounding", "weight_2d", "format",
                 "mxfp8_gradients")

    def __init__(self, rht=True, stochastic_rounding=True, weight_2d=True,
                 format="nvfp4", mxfp8_gradients="e4m3"):
        block_of(format)
        if mxfp8_gradients not in ("e4m3", "e5m2"):
            raise ValueError(f"mxfp8_gradients {mxfp8_gradients!r}: "
                             f"expected 'e4m3' or 'e5m2'")
        self.rht = bool(rht)
        self.stochastic_rounding = bool(stochastic_rounding)
        self.weight_2d = bool(weight_2d)
        self.format = format
        self.mxfp8_gradients = mxfp8_gradients

    def pass_options(self):
        # E5M2 gradients only where they apply (an MXFP8 layer), so that
        # other layers keep their pipeline and cache keys.
        hybrid = " mxfp8-gradients=e5m2" if self.format == "mxfp8" and \
            self.mxfp8_gradients == "e5m2" else ""
        return (f"rht={int(self.rht)} "
                f"stochastic-rounding={int(self.stochastic_rounding)} "
                f"weight-2d={int(self.weight_2d)} "
                f"seed-argument={SEED_ARGUMENT}{hybrid}")

    def with_format(self, layer_format):
        """These knobs with another layer format."""
        return RecipeOptions(self.rht, self.stochastic_rounding,
                             self.weight_2d, layer_format,
                             self.mxfp8_gradients)

    def key(self):
        return (self.rht, self.stochastic_rounding, self.weight_2d,
                self.format,
                self.mxfp8_gradients if self.format == "mxfp8" else "e4m3")

    def __eq__(self, other):
        return isinstance(other, RecipeOptions) and self.key() == other.key()

    def __hash__(self):
        return hash(self.key())

    def __repr__(self):
        fmt = "" if self.format == "nvfp4" else f", format={self.format!r}"
        if self.mxfp8_gradients != "e4m3":
            fmt += f", mxfp8_gradients={self.mxfp8_gradients!r}"
        return (f"RecipeOptions(rht={self.rht}, stochastic_rounding="
                f"{self.stochastic_rounding}, weight_2d={self.weight_2d}"
                f"{fmt})")


class LayerShape:
    """tokens x in_features -> out_features; every extent must be a
    positive multiple of 16 (the NVFP4 block along each GEMM's K: in for
    fprop, out for dgrad, the tokens for wgrad)."""

    __slots__ = ("tokens", "in_features", "out_features")

    def __init__(self, tokens, in_features, out_features):
        for name, value in (("tokens", tokens), ("in_features", in_features),
                            ("out_features", out_features)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name} must be an int, got "
                                 f"{type(value).__name__}")
            if value <= 0 or value % 16:
                role = {"tokens": "wgrad", "in_features": "fprop",
                        "out_features": "dgrad"}[name]
                raise ValueError(
                    f"{name} = {value}: NVFP4 needs a positive multiple of 16 "
                    f"(it is K, the contracted dimension, of the {role} GEMM, "
                    f"quantized in blocks of 16)")
        self.tokens = tokens
        self.in_features = in_features
        self.out_features = out_features

    def key(self):
        return (self.tokens, self.in_features, self.out_features)

    def __eq__(self, other):
        return isinstance(other, LayerShape) and self.key() == other.key()

    def __hash__(self):
        return hash(self.key())

    def __repr__(self):
        return (f"LayerShape(tokens={self.tokens}, in_features="
                f"{self.in_features}, out_features={self.out_features})")


def derive_stream_seed(seed, stream):
    """The seed of stochastic-rounding stream `stream` derived from `seed`
    (SplitMix64 output stream + 1), as nvfp4-apply-recipe mixes it."""
    mask = (1 << 64) - 1
    z = (seed + 0x9E3779B97F4A7C15 * (stream + 1)) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return z ^ (z >> 31)


_MAPS_MK_NK = ("indexing_maps = [affine_map<(m, n, k) -> (m, k)>, "
               "affine_map<(m, n, k) -> (n, k)>, "
               "affine_map<(m, n, k) -> (m, n)>]")


def _matmul(result, lhs, rhs, lhs_type, rhs_type, out_type, role, zero):
    return (f"  {result} = linalg.matmul {_MAPS_MK_NK}\n"
            f"      {{nvfp4.layer = 0 : i64, nvfp4.kind = \"ffn\", "
            f"nvfp4.role = \"{role}\"}}\n"
            f"      ins({lhs}, {rhs} : {lhs_type}, {rhs_type}) "
            f"outs({zero} : {out_type}) -> {out_type}\n")


def _zeros(name, tensor_type):
    return (f"  %{name}_empty = tensor.empty() : {tensor_type}\n"
            f"  %{name} = linalg.fill ins(%zero : bf16) outs(%{name}_empty : "
            f"{tensor_type}) -> {tensor_type}\n")


def _t(*dims):
    return "tensor<" + "x".join(str(d) for d in dims) + "xbf16>"


def forward_ir(shape):
    """Annotated model IR of the fprop GEMM: y[T, out] = x[T, in] w[out, in]^T."""
    t, k, n = shape.tokens, shape.in_features, shape.out_features
    return (
        f"// nvfp4.torch: fprop of a linear layer, {t} tokens, {k} -> {n}\n"
        f"func.func @forward(%x: {_t(t, k)}, %w: {_t(n, k)} {{nvfp4.weight}})"
        f" -> {_t(t, n)} {{\n"
        f"  %zero = arith.constant 0.0 : bf16\n"
        + _zeros("y0", _t(t, n))
        + _matmul("%y", "%x", "%w", _t(t, k), _t(n, k), _t(t, n), "fprop",
                  "%y0")
        + f"  return %y : {_t(t, n)}\n}}\n")


def backward_ir(shape):
    """Annotated model IR of dgrad and wgrad with the transposed operands
    given: dx[T, in] = dy[T, out] wt[in, out]^T and
    dw[out, in] = dyt[out, T] xt[in, T]^T; argument 4 is the SR seed."""
    t, k, n = shape.tokens, shape.in_features, shape.out_features
    return (
        f"// nvfp4.torch: dgrad and wgrad of a linear layer, {t} tokens, "
        f"{k} -> {n}\n"
        f"func.func @backward(%dy: {_t(t, n)}, %wt: {_t(k, n)} "
        f"{{nvfp4.weight}}, %dyt: {_t(n, t)}, %xt: {_t(k, t)}, %seed: i64)"
        f" -> ({_t(t, k)}, {_t(n, k)}) {{\n"
        f"  %zero = arith.constant 0.0 : bf16\n"
        + _zeros("dx0", _t(t, k)) + _zeros("dw0", _t(n, k))
        + _matmul("%dx", "%dy", "%wt", _t(t, n), _t(k, n), _t(t, k),
                  "dgrad", "%dx0")
        + _matmul("%dw", "%dyt", "%xt", _t(n, t), _t(k, t), _t(n, k),
                  "wgrad", "%dw0")
        + f"  return %dx, %dw : {_t(t, k)}, {_t(n, k)}\n}}\n")


def layer_ir(shape):
    """Both functions of a layer (for reading: each is compiled on its own,
    one host function per bundle)."""
    return forward_ir(shape) + "\n" + backward_ir(shape)


def find_tool(name):
    """nvfp4-opt / nvfp4-compile: $NVFP4_TOOLS_DIR, the build tree's bin/
    next to this package (build/python_packages/nvfp4 -> build/bin), then
    $PATH. None when not found."""
    directory = os.environ.get("NVFP4_TOOLS_DIR")
    candidates = [os.path.join(directory, name)] if directory is not None \
        else [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                           "..", "bin", name)]
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return os.path.abspath(path)
    if directory is not None:
        return None
    return shutil.which(name)


def default_cache_dir():
    """$NVFP4_CACHE_DIR, else ~/.cache/nvfp4 (XDG_CACHE_HOME respected)."""
    explicit = os.environ.get("NVFP4_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache")
    return os.path.join(base, "nvfp4")


_CHIPS = {(9, 0): "sm_90a", (10, 0): "sm_100a", (10, 3): "sm_103a",
          (12, 0): "sm_120a"}


def chip_of_capability(major, minor):
    """The nvfp4 chip of a compute capability ((9, 0) -> "sm_90a")."""
    chip = _CHIPS.get((int(major), int(minor)))
    if chip is None:
        raise ValueError(f"no nvfp4 kernels for compute capability "
                         f"{major}.{minor} (nvfp4 targets sm_90a, sm_100a, "
                         f"sm_103a and sm_120a)")
    return chip


def _run(tool, args, what):
    result = subprocess.run([tool] + args, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{what} failed ({os.path.basename(tool)} exit "
                           f"{result.returncode}): "
                           + result.stderr.strip()[-4000:])
    return result


class KernelCache:
    """Compiled bundles on disk: ``<dir>/<chip>/<key>/`` holds
    ``kernels.cubin`` (or ``.ptx`` without ptxas), ``manifest.json``,
    the input IR, the IR after the passes, and ``meta.json``. The key hashes
    the IR, the pass options and the chip; ``meta.json`` names the compiler
    binaries' hash, and an entry another compiler wrote is compiled again
    when a compiler is available here (without one it is used as it is)."""

    def __init__(self, directory=None):
        self.directory = os.path.abspath(directory or default_cache_dir())
        self.compiles = 0  # compilations this process ran (tests, logs)
        self._identity = None

    def _compiler_identity(self, opt, compiler):
        if self._identity is None:
            digest = hashlib.sha256()
            for tool in (opt, compiler):
                with open(tool, "rb") as f:
                    for block in iter(lambda: f.read(1 << 20), b""):
                        digest.update(block)
            self._identity = digest.hexdigest()[:16]
        return self._identity

    @staticmethod
    def key(ir, pass_pipeline, chip):
        digest = hashlib.sha256()
        for part in (f"format {CACHE_FORMAT}", chip, pass_pipeline, ir):
            digest.update(part.encode())
            digest.update(b"\0")
        return digest.hexdigest()[:24]

    def entry(self, ir, pass_pipeline, chip, name):
        """(image path, manifest path) of the bundle compiled from `ir` with
        `pass_pipeline` (nvfp4-opt arguments) for `chip`; compiles on a miss.
        `name` is for messages."""
        key = self.key(ir, pass_pipeline, chip)
        where = os.path.join(self.directory, chip, key)
        opt, compiler = find_tool("nvfp4-opt"), find_tool("nvfp4-compile")
        have_compiler = opt is not None and compiler is not None
        meta_path = os.path.join(where, "meta.json")
        if os.path.isfile(meta_path):
            try:
                with open(meta_path) as f:
                    meta = json.load(f)
                image = os.path.join(where, meta["image"])
                manifest = os.path.join(where, "manifest.json")
                fresh = (not have_compiler or meta.get("compiler") ==
                         self._compiler_identity(opt, compiler))
                if fresh and os.path.isfile(image) and \
                        os.path.isfile(manifest):
                    return image, manifest
            except (OSError, ValueError, KeyError):
                pass  # a damaged entry is compiled again
        if not have_compiler:
            raise CompilerUnavailable(
                f"no compiled kernels for {name} ({chip}) in {self.directory}"
                f", and nvfp4-opt / nvfp4-compile were not found to compile "
                f"them (set NVFP4_TOOLS_DIR): compile them on a machine with "
                f"the compiler into this cache (nvfp4.torch.prepare, python3 -m "
                f"nvfp4.layer_kernels, examples/training/make_kit.py) and copy "
                f"it here")
        self._compile(ir, pass_pipeline, chip, where, opt, compiler, name)
        self.compiles += 1
        with open(meta_path) as f:
            meta = json.load(f)
        return os.path.join(where, meta["image"]), \
            os.path.join(where, "manifest.json")

    def _compile(self, ir, pass_pipeline, chip, where, opt, compiler, name):
        os.makedirs(os.path.dirname(where), exist_ok=True)
        staging = tempfile.mkdtemp(prefix=".staging-",
                                   dir=os.path.dirname(where))
        try:
            source = os.path.join(staging, "layer.mlir")
            lowered = os.path.join(staging, "nvfp4.mlir")
            with open(source, "w") as f:
                f.write(ir)
            _run(opt, [source] + pass_pipeline.split("\t") + ["-o", lowered],
                 f"the recipe passes on {name}")
            with open(lowered) as f:
                text = f.read()
            if "linalg.matmul" in text:
                raise ValueError(
                    f"{name}: nvfp4-assign-precision / nvfp4-apply-recipe left "
                    f"a GEMM in BF16 (see the remarks of nvfp4-opt {source} "
                    f"{pass_pipeline.replace(chr(9), ' ')}); the layer cannot "
                    f"run in NVFP4")
            ptxas = shutil.which("ptxas") or (
                "/usr/local/cuda/bin/ptxas"
                if os.path.exists("/usr/local/cuda/bin/ptxas") else None)
            emit, image = ("cubin", "kernels.cubin") if ptxas else \
                ("ptx", "kernels.ptx")
            _run(compiler, [lowered, f"--chip={chip}", f"--emit={emit}",
                            "--keep-first=0", "--keep-last=0", "-o",
                            os.path.join(staging, image),
                            "--report=" + os.path.join(staging,
                                                       "manifest.json")],
                 f"nvfp4-compile of {name}")
            for leftover in os.listdir(staging):  # a --report picture
                if leftover.endswith(".svg"):
                    os.unlink(os.path.join(staging, leftover))
            with open(os.path.join(staging, "manifest.json")) as f:
                manifest = json.load(f)
            if manifest.get("host_computation"):
                ops = ", ".join(h.get("op", "?")
                                for h in manifest["host_computation"])
                raise ValueError(f"{name}: the compiled host function leaves "
                                 f"computation on the host ({ops})")
            with open(os.path.join(staging, "meta.json"), "w") as f:
                json.dump({"image": image, "chip": chip, "name": name,
                           "passes": pass_pipeline,
                           "compiler": self._compiler_identity(opt, compiler)},
                          f, indent=1)
            if os.path.isdir(where):
                shutil.rmtree(where)
            os.chmod(staging, 0o755)
            os.rename(staging, where)
        finally:
            if os.path.isdir(staging):
                shutil.rmtree(staging)


def _recipe_pipeline(options):
    """nvfp4-opt arguments (tab-separated) of a layer's passes: the layer
    is one quantized block (convert decided that) in the options' format
    (the default of every kind; NVFP4 needs no entry, which keeps the
    cache keys of NVFP4 layers what they were), the recipe's knobs."""
    formats = "" if options.format == "nvfp4" else \
        f" formats={options.format}"
    return "\t".join([
        "--nvfp4-assign-precision=keep-first=0 keep-last=0" + formats,
        f"--nvfp4-apply-recipe={options.pass_options()}",
        "--nvfp4-fuse-quantization"])


def compile_layer(shape, options, chip, cache=None):
    """Compiles (or finds in the cache) both bundles of a layer for `chip`
    without a GPU; returns {"forward": (image, manifest), "backward": ...}.
    """
    block = block_of(options.format)
    for name, value in (("tokens", shape.tokens),
                        ("in_features", shape.in_features),
                        ("out_features", shape.out_features)):
        if value % block:
            raise ValueError(
                f"{name} = {value}: {options.format.upper()} quantizes in "
                f"blocks of {block} along K (the {name} are K of a GEMM of "
                f"the layer); it needs a multiple of {block}")
    cache = cache or KernelCache()
    pipeline = _recipe_pipeline(options)
    label = f"{shape} {options}"
    return {phase: cache.entry(ir, pipeline, chip, f"{phase} of {label}")
            for phase, ir in (("forward", forward_ir(shape)),
                              ("backward", backward_ir(shape)))}


class LayerKernels:
    """The forward and backward bundles of one layer shape and recipe on one
    device, launched on the caller's memory and stream (nvfp4_runtime
    Launcher). Addresses are ints or tensors; the caller provides dense
    bf16 buffers of the documented shapes and a workspace per launch."""

    def __init__(self, shape, options, chip, device=0, cache=None):
        import nvfp4_runtime as rt
        self.shape = shape
        self.options = options
        self.chip = chip
        self.cache = cache or KernelCache()
        self.paths = compile_layer(shape, options, chip, self.cache)
        self.bundles, self.launchers = {}, {}
        for phase, (image, manifest) in self.paths.items():
            bundle = rt.load(image, manifest, device)
            self.bundles[phase] = bundle
            self.launchers[phase] = bundle.launcher()
        self._check_signatures()
        self._plans = {}

    def _check_signatures(self):
        t, k, n = self.shape.key()
        expected = {"forward": ([t * k * 2, n * k * 2], [t * n]),
                    "backward": ([t * n * 2, k * n * 2, n * t * 2, k * t * 2],
                                 [t * k, n * k])}
        for phase, (arrays, results) in expected.items():
            launcher = self.launchers[phase]
            got = [a[2] for a in launcher.arguments[:len(arrays)]
                   if a is not None]
            got_results = [r[1] for r in launcher.results]
            if got != arrays or got_results != results:
                raise RuntimeError(
                    f"the cached {phase} bundle {self.paths[phase][1]} does "
                    f"not have the signature of {self.shape}: arguments "
                    f"{launcher.arguments}, results {launcher.results}")

    def workspace_bytes(self, phase):
        return self.launchers[phase].workspace_bytes

    def manifest(self, phase):
        with open(self.paths[phase][1]) as f:
            return json.load(f)

    def forward(self, x, w, y, stream=None, workspace=None, sharded=(),
                reduce=None):
        """y[T, out] = NVFP4 fprop of x[T, in] and w[out, in]. `sharded`
        and `reduce`: see launch()."""
        self.launch("forward", [x, w], [y], stream, workspace, sharded,
                    reduce)

    def backward(self, dy, wt, dyt, xt, seed, dx, dw, stream=None,
                 workspace=None, sharded=(), reduce=None):
        """dx[T, in] and dw[out, in] from dy[T, out], wt = w^T [in, out],
        dyt = dy^T [out, T], xt = x^T [in, T] and the step's SR seed.
        `sharded` and `reduce`: see launch()."""
        launcher = self.launchers["backward"]
        arguments = [dy, wt, dyt, xt, seed][:len(launcher.arguments)]
        self.launch("backward", arguments, [dx, dw], stream, workspace,
                    sharded, reduce)

    def plan(self, phase, sharded):
        """launch_plan() of `phase`'s manifest (cached)."""
        key = (phase, frozenset(sharded))
        if key not in self._plans:
            self._plans[key] = launch_plan(self.manifest(phase), key[1])
        return self._plans[key]

    def launch(self, phase, arguments, results, stream=None, workspace=None,
               sharded=(), reduce=None):
        """Enqueues `phase`'s kernels. `sharded`: the host function's
        argument indices whose tensor is one rank's shard of a larger one,
        split along a dimension other than the tokens (a tensor-parallel
        weight or activation): their amaxes must be the whole tensor's.
        The launch then goes in parts (launch_plan): the amax kernels of
        the sharded arguments; ``finish = reduce(offsets)`` with the
        workspace byte offsets of those amaxes (int32 bits of the FP32
        amax: the int32 max of non-negative floats is their max), which
        must make them the group's maximum (it may start an asynchronous
        reduction and return a function that waits for it, or None); the
        kernels that do not read them (overlapping the reduction);
        finish(); the rest."""
        launcher = self.launchers[phase]
        if not sharded:
            launcher.launch(arguments, results, stream, workspace)
            return
        if workspace is None:
            raise ValueError("a launch with sharded operands needs the "
                             "caller's workspace")
        first, overlap, rest, amaxes = self.plan(phase, sharded)
        launcher.launch(arguments, results, stream, workspace, first, True)
        finish = reduce([launcher.workspace_offset(b) for b in amaxes])
        if overlap:
            launcher.launch(arguments, results, stream, workspace, overlap,
                            False)
        if finish is not None:
            finish()
        if rest:
            launcher.launch(arguments, results, stream, workspace, rest,
                            False)


def _kernel_buffers(kernel):
    return {p["buffer"] for p in kernel["params"]
            if p.get("buffer") is not None}


def launch_plan(manifest, sharded):
    """How to launch a bundle whose arguments `sharded` (host-function
    argument indices) need their amaxes reduced across ranks before they
    are used: (first, overlap, rest, amax_buffers). `first`: the amax
    kernels of those arguments (each reads only its argument and writes
    only its one-element amax buffer, which no earlier kernel touches, so
    it may run first); `amax_buffers`: their buffers; `overlap`: in
    manifest order, the kernels that share no scratch or result buffer with
    an amax buffer or with a kernel of `rest` before them (they run while
    the amaxes are reduced); `rest`: the other kernels, in manifest order.
    Raises ValueError when a sharded argument has no such amax kernel."""
    kernels, buffers = manifest["kernels"], manifest["buffers"]
    inputs = {i: b["argument"] for i, b in enumerate(buffers)
              if b.get("argument", -1) >= 0 and b.get("result", -1) < 0}
    touched = [_kernel_buffers(k) for k in kernels]
    first, amaxes, found = [], [], set()
    for k, kernel in enumerate(kernels):
        name = kernel["name"]
        if "amax" not in name or "quantize" in name or "matmul" in name:
            continue
        read = [b for b in touched[k] if b in inputs]
        written = [b for b in touched[k] if b not in inputs]
        if len(read) != 1 or len(written) != 1 or \
                inputs[read[0]] not in sharded:
            continue
        amax = written[0]
        spec = buffers[amax]
        if spec.get("elements") != 1 or \
                spec.get("element_type") not in ("i32", "f32"):
            raise ValueError(f"kernel {k} ({name}) writes buffer {amax}, "
                             f"not a one-element amax")
        if any(amax in touched[j] for j in range(k)):
            raise ValueError(f"kernel {k} ({name}): its amax buffer {amax} "
                             f"is used before it")
        first.append(k)
        amaxes.append(amax)
        found.add(inputs[read[0]])
    missing = sorted(set(sharded) - found)
    if missing:
        raise ValueError(f"@{manifest.get('function', '?')}: no amax kernel "
                         f"of argument(s) {missing} (a sharded operand's "
                         f"amax must come from its own amax kernel)")
    tainted, overlap, rest = set(amaxes), [], []
    for k in range(len(kernels)):
        if k in first:
            continue
        scratch = {b for b in touched[k] if b not in inputs}
        if scratch & tainted:
            rest.append(k)
            tainted |= scratch
        else:
            overlap.append(k)
    return first, overlap, rest, amaxes


_PRECISION = re.compile(r'nvfp4\.precision = "(\w+)"')


def layer_policy(layers, keep_first=None, keep_last=None, keep_kinds=None,
                 cache=None):
    """Which layers nvfp4-assign-precision makes NVFP4: `layers` is a list
    of (block index or None, kind, in_features, out_features); returns one
    bool per layer (layer_formats without formats: NVFP4 or BF16)."""
    return [f == "nvfp4" for f in layer_formats(
        layers, keep_first, keep_last, keep_kinds, None, cache)]


def layer_formats(layers, keep_first=None, keep_last=None, keep_kinds=None,
                  formats=None, cache=None):
    """The format nvfp4-assign-precision gives each layer: `layers` is a
    list of (block index or None, kind, in_features, out_features),
    `formats` the pass's formats= (see format_entries; None: NVFP4 for
    every kind); returns one of LAYER_FORMATS, or None for BF16, per
    layer. A layer takes a format when its fprop and dgrad GEMMs both get
    it (a layer outside the blocks, block None, counts as kind "head"
    unless its kind says otherwise). The answer is cached like kernels, so
    a machine without nvfp4-opt can use a policy computed elsewhere."""
    lines, args = [], []
    for i, (block, kind, k, n) in enumerate(layers):
        args.append(f"%w{i}: {_t(n, k)} {{nvfp4.weight}}")
        args.append(f"%x{i}: {_t(16, k)}")
        args.append(f"%dy{i}: {_t(16, n)}")
        attributes = [f'nvfp4.kind = "{kind}"']
        if block is not None:
            attributes.insert(0, f"nvfp4.layer = {int(block)} : i64")
        for role, lhs, rhs, lhs_type, rhs_type, out, maps in (
                ("fprop", f"%x{i}", f"%w{i}", _t(16, k), _t(n, k),
                 _t(16, n), _MAPS_MK_NK),
                ("dgrad", f"%dy{i}", f"%w{i}", _t(16, n), _t(n, k),
                 _t(16, k), "")):
            lines.append(
                f"  %{role}{i}_e = tensor.empty() : {out}\n"
                f"  %{role}{i}_z = linalg.fill ins(%zero : bf16) outs("
                f"%{role}{i}_e : {out}) -> {out}\n"
                f"  %{role}{i} = linalg.matmul {maps} {{"
                + ", ".join(attributes + [f'nvfp4.role = "{role}"'])
                + f"}} ins({lhs}, {rhs} : {lhs_type}, {rhs_type}) outs("
                f"%{role}{i}_z : {out}) -> {out}\n")
    ir = ("func.func @model(" + ", ".join(args) + ") {\n"
          "  %zero = arith.constant 0.0 : bf16\n" + "".join(lines)
          + "  return\n}\n")
    options = []
    if keep_first is not None:
        options.append(f"keep-first={int(keep_first)}")
    if keep_last is not None:
        options.append(f"keep-last={int(keep_last)}")
    if keep_kinds is not None:
        options.append("keep-kinds=" + (",".join(keep_kinds) or "none"))
    entries = format_entries(formats)
    if entries:
        options.append("formats=" + ",".join(entries))
    argument = "--nvfp4-assign-precision" + (
        "=" + " ".join(options) if options else "")

    cache = cache or KernelCache()
    key = KernelCache.key(ir, argument, "policy")
    path = os.path.join(cache.directory, "policy", key + ".json")
    if os.path.isfile(path):
        with open(path) as f:
            decisions = json.load(f)
        if len(decisions) == len(layers) and all(
                d is None or d in LAYER_FORMATS for d in decisions):
            return decisions
    opt = find_tool("nvfp4-opt")
    if opt is None:
        raise CompilerUnavailable(
            f"the precision policy of these {len(layers)} layers is not in "
            f"{cache.directory} and nvfp4-opt was not found (set "
            f"NVFP4_TOOLS_DIR) to compute it")
    result = subprocess.run([opt, "-", argument], input=ir,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    if result.returncode != 0:
        raise RuntimeError("nvfp4-assign-precision failed: "
                           + result.stderr.strip()[-2000:])
    precisions = [m.group(1) for line in result.stdout.splitlines()
                  if "linalg.matmul" in line
                  for m in [_PRECISION.search(line)] if m]
    if len(precisions) != 2 * len(layers):
        raise RuntimeError(f"nvfp4-assign-precision answered for "
                           f"{len(precisions)} of {2 * len(layers)} GEMMs")
    decisions = [precisions[2 * i]
                 if precisions[2 * i] == precisions[2 * i + 1] and
                 precisions[2 * i] in LAYER_FORMATS else None
                 for i in range(len(layers))]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = path + f".{os.getpid()}.tmp"
    with open(temporary, "w") as f:
        json.dump(decisions, f)
    os.replace(temporary, path)
    return decisions


def main(argv=None):
    """python3 -m nvfp4.layer_kernels --tokens T --in K --out N --chip C
    [--no-rht] [--no-sr] [--no-2d] [--format F] [--cache DIR]: compiles one layer's
    kernels into the cache and prints the bundle paths."""
    import argparse
    parser = argparse.ArgumentParser(prog="python3 -m nvfp4.layer_kernels",
                                     description=main.__doc__)
    parser.add_argument("--tokens", type=int, required=True)
    parser.add_argument("--in", dest="in_features", type=int, required=True)
    parser.add_argument("--out", dest="out_features", type=int,
                        required=True)
    parser.add_argument("--chip", default="sm_90a")
    parser.add_argument("--no-rht", action="store_true")
    parser.add_argument("--no-sr", action="store_true")
    parser.add_argument("--no-2d", action="store_true")
    parser.add_argument("--format", default="nvfp4",
                        choices=list(LAYER_FORMATS))
    parser.add_argument("--cache", default=None)
    args = parser.parse_args(argv)
    try:
        paths = compile_layer(
            LayerShape(args.tokens, args.in_features, args.out_features),
            RecipeOptions(not args.no_rht, not args.no_sr, not args.no_2d,
                          args.format),
            args.chip, KernelCache(args.cache))
    except (ValueError, RuntimeError) as e:
        print(f"nvfp4.layer_kernels: error: {e}", file=__import__("sys").stderr)
        return 1
    for phase, (image, manifest) in paths.items():
        print(f"{phase}: {image} {manifest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
