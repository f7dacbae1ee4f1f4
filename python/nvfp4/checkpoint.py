"""NVFP4 checkpoints in the ModelOpt / Hugging Face safetensors layout.

The same code as the nvfp4-checkpoint tool (docs/Checkpoints.md): per NVFP4
linear layer NAME a checkpoint holds NAME.weight (uint8 [N, K/2], element 2i
in the low nibble), NAME.weight_scale (float8_e4m3fn [N, K/16]),
NAME.weight_scale_2 (float32, the decode scale) and optionally
NAME.input_scale, next to an hf_quant_config.json with quant_algo NVFP4.

    import nvfp4.checkpoint as ck
    ck.quantize("model.safetensors", "out/", keep_last=1)
    w, input_scale = ck.load_layer("out/", "model.layers.0.mlp.up_proj")
    nvfp4.dequantize(w)        # exactly the checkpoint's values
    text = ck.import_layer("out/", "model.layers.0.mlp.up_proj", tokens=128)

Malformed files (truncated, overlapping offsets, unknown dtypes, wrong
shapes) raise ValueError with the reader's message.
"""

import json as _json
import os as _os
import tempfile as _tempfile

import numpy as _np

from . import QuantizedTensor, __version__
from . import dequantize as _dequantize
from . import _checkpoint


def quantize(input, out_dir, exclude=(), keep_first=0, keep_last=0,
             input_amax=None):
    """Quantizes the linear weights of a BF16/FP16/FP32 safetensors file into
    the ModelOpt NVFP4 layout in out_dir (model.safetensors and
    hf_quant_config.json). Embeddings, the LM head, modules matching an
    `exclude` pattern ('*' wildcards) and the first keep_first / last
    keep_last transformer blocks stay as they are. input_amax: a
    {module: activation amax} dict or the path of such a JSON file; those
    modules get input_scale = amax / 2688. Returns {"quantized": [...],
    "excluded": [(module, reason), ...]}."""
    exclude = [str(p) for p in exclude]
    if isinstance(input_amax, dict):
        with _tempfile.TemporaryDirectory() as tmp:
            path = _os.path.join(tmp, "input_amax.json")
            with open(path, "w") as f:
                _json.dump({str(k): float(v) for k, v in input_amax.items()}, f)
            return _checkpoint.quantize(str(input), str(out_dir), exclude,
                                        int(keep_first), int(keep_last), path,
                                        __version__)
    return _checkpoint.quantize(str(input), str(out_dir), exclude,
                                int(keep_first), int(keep_last),
                                "" if input_amax is None else str(input_amax),
                                __version__)


def layers(checkpoint_dir):
    """The module names of the NVFP4 layers of a checkpoint directory."""
    return _checkpoint.list_layers(str(checkpoint_dir))


def load_layer(checkpoint_dir, name):
    """Returns (weight, input_scale): the layer's weight as an
    nvfp4.QuantizedTensor whose decode_scale is weight_scale_2 bit for bit,
    and its input_scale (a float) or None."""
    codes, scales, decode, input_scale = _checkpoint.load_layer(
        str(checkpoint_dir), str(name))
    return (QuantizedTensor._from_validated(codes, scales, None, (1, 16),
                                            decode_scale=decode),
            input_scale)


def import_layer(checkpoint_dir, name, tokens=128):
    """MLIR text of @forward(x, w) for the layer, its weight an
    !nvfp4.tensor<..., tensor_scale = decode> argument (nvfp4.compile
    compiles it)."""
    return _checkpoint.import_layer(str(checkpoint_dir), str(name),
                                    int(tokens))


def inspect(path):
    """What a safetensors file or checkpoint directory holds, as text."""
    return _checkpoint.inspect(str(path))


def tensors(path):
    """[(name, dtype, shape), ...] of a safetensors file, in data order."""
    return _checkpoint.list_tensors(str(path))[0]


_NUMPY_DTYPES = {
    "BOOL": _np.bool_, "U8": _np.uint8, "I8": _np.int8, "I16": _np.int16,
    "U16": _np.uint16, "F16": _np.float16, "I32": _np.int32,
    "U32": _np.uint32, "F32": _np.float32, "F64": _np.float64,
    "I64": _np.int64, "U64": _np.uint64,
    # Bit patterns: numpy has no such float types.
    "BF16": _np.uint16, "F8_E4M3": _np.uint8, "F8_E5M2": _np.uint8,
}


def read_tensor(path, name):
    """One tensor of a safetensors file as a numpy array (BF16 and FP8 as
    their bit patterns, uint16 / uint8)."""
    for tensor_name, dtype, shape in tensors(path):
        if tensor_name == name:
            data = _checkpoint.read_tensor(str(path), str(name))
            array = _np.frombuffer(data, _np.dtype(_NUMPY_DTYPES[dtype])
                                   .newbyteorder("<"))
            return array.reshape(shape).copy()
    raise ValueError("{}: no tensor '{}'".format(path, name))


_NVFP4_SUFFIXES = (".weight_scale_2", ".weight_scale", ".input_scale")


def dequantized_state_dict(checkpoint_dir):
    """Every tensor of a checkpoint directory as a float32 numpy array, the
    NVFP4 layers' weights decoded exactly (e2m1 * weight_scale *
    weight_scale_2, as nvfp4.dequantize) under their original names
    (NAME.weight); weight_scale, weight_scale_2 and input_scale are consumed.
    BF16 and F16 tensors widen exactly; integer tensors keep their dtype.
    For reference (high-precision) inference: nvfp4.torch.load_checkpoint
    puts it into a model."""
    checkpoint_dir = str(checkpoint_dir)
    nvfp4_layers = set(layers(checkpoint_dir))
    files = sorted(f for f in _os.listdir(checkpoint_dir)
                   if f.endswith(".safetensors"))
    state = {}
    for file in files:
        path = _os.path.join(checkpoint_dir, file)
        for name, dtype, _ in tensors(path):
            module, _, leaf = name.rpartition(".")
            if module in nvfp4_layers and (
                    leaf == "weight" or name.endswith(_NVFP4_SUFFIXES)):
                continue
            array = read_tensor(path, name)
            if dtype == "BF16":
                array = (array.astype(_np.uint32) << 16).view(_np.float32)
            elif dtype in ("F16", "F64"):
                array = array.astype(_np.float32)
            elif dtype.startswith("F8"):
                raise ValueError("{}: tensor '{}' is {}, which only NVFP4 "
                                 "layers' scales may be".format(path, name,
                                                                dtype))
            state[name] = array
    for module in nvfp4_layers:
        weight, _ = load_layer(checkpoint_dir, module)
        state[module + ".weight"] = _dequantize(weight)
    return state
