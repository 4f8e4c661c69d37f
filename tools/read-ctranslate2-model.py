#!/usr/bin/env python3
"""Reads a CTranslate2 model directory written by attn-export and checks it against the run.

An independent reader: it parses CTranslate2's model.bin (binary version 6) and the attn
checkpoint (safetensors) with its own code, derives the variables CTranslate2's TransformerSpec
(revision 7) declares for the run's config, and compares every tensor with the checkpoint's:

  - names: model.bin's variables and aliases are exactly the spec's (plus NAME_scale for int8);
  - attributes (rank-0 variables): type and value (heads, pre_norm, activation, flags, ...);
  - tensors: shape, type, and values equal to the checkpoint's (float32 bit for bit; int8 the
    per-row quantisation CTranslate2's converters compute, to the bit; float16/bfloat16 the
    round-to-nearest-even conversion), position tables recomputed (attn's sinusoids), the
    encoder's ALiBi as a T5 bucket table recomputed here;
  - config.json's tokens and the vocabulary files against the run's SentencePiece .vocab files.

Usage: read-ctranslate2-model.py MODEL_DIR --run RUN_DIR [--checkpoint FILE]
                                 [--quantization float32|int8|float16|bfloat16]
Prints a summary and exits 0, or prints each problem and exits 1.
"""
import argparse
import json
import math
import os
import struct
import sys

import numpy as np

CT2_TYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16, 5: np.uint16}  # 5: bfloat16 bits
CT2_TYPE_NAMES = {0: "float32", 1: "int8", 2: "int16", 3: "int32", 4: "float16", 5: "bfloat16"}


class Reader:
    def __init__(self, data):
        self.data, self.at = data, 0

    def take(self, fmt):
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values[0] if len(values) == 1 else values

    def string(self):
        length = self.take("H")
        raw = self.data[self.at:self.at + length]
        self.at += length
        if length == 0 or raw[-1] != 0:
            raise ValueError("string at byte %d is not NUL-terminated" % self.at)
        return raw[:-1].decode("utf-8")


def read_model_bin(path):
    """-> (spec, revision, {name: (type id, ndarray)}, {alias: name})"""
    reader = Reader(open(path, "rb").read())
    version = reader.take("I")
    if version != 6:
        raise ValueError("binary version %d, expected 6" % version)
    spec, revision = reader.string(), reader.take("I")
    variables = {}
    for _ in range(reader.take("I")):
        name = reader.string()
        rank = reader.take("B")
        shape = [reader.take("I") for _ in range(rank)]
        type_id, size = reader.take("B"), reader.take("I")
        dtype = np.dtype(CT2_TYPES[type_id])
        if size != int(np.prod(shape, dtype=np.int64)) * dtype.itemsize:
            raise ValueError("%s: %d bytes for shape %s of %s" % (name, size, shape, CT2_TYPE_NAMES[type_id]))
        array = np.frombuffer(reader.data, dtype=dtype.newbyteorder("<"), count=size // dtype.itemsize, offset=reader.at)
        reader.at += size
        variables[name] = (type_id, array.reshape(shape))
    aliases = {}
    for _ in range(reader.take("I")):
        alias = reader.string()
        aliases[alias] = reader.string()
    if reader.at != len(reader.data):
        raise ValueError("%d bytes after the aliases" % (len(reader.data) - reader.at))
    return spec, revision, variables, aliases


def read_safetensors(path):
    """-> ({name: float32 ndarray}, metadata)"""
    data = open(path, "rb").read()
    (header_size,) = struct.unpack_from("<Q", data, 0)
    header = json.loads(data[8:8 + header_size])
    metadata = header.pop("__metadata__", {})
    base = 8 + header_size
    tensors = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        if entry["dtype"] != "F32":
            continue  # attn's float checkpoints hold F32 parameters (extras such as optimizer moments too)
        tensors[name] = np.frombuffer(data[base + begin:base + end], dtype="<f4").reshape(entry["shape"])
    return tensors, metadata


# ---- what the run's model is under CTranslate2's names --------------------------------------

def sinusoids(rows, width):
    """attn's table: position p from 0, sin at even dimensions i, cos at i + 1, p / 10000^(i / D)."""
    table = np.zeros((rows, width), dtype=np.float64)
    for i in range(0, width, 2):
        angle = np.arange(rows, dtype=np.float64) / (10000.0 ** (i / width))
        table[:, i] = np.sin(angle)
        if i + 1 < width:
            table[:, i + 1] = np.cos(angle)
    return table.astype(np.float32)


def alibi_slopes(heads):
    """Press et al.: 2^(-8 k / n) for the largest power of two n <= heads, then every other one of 2n."""
    n = 2 ** int(math.floor(math.log2(heads)))
    slopes = [2.0 ** (-8.0 * (k + 1) / n) for k in range(n)]
    finer = [2.0 ** (-8.0 * (k + 1) / (2 * n)) for k in range(2 * n)]
    slopes += finer[0::2][:heads - n]
    return np.array(slopes, dtype=np.float32)


def t5_bucket_distance(rows, max_distance):
    """The distance each bucket of one direction stands for, under CTranslate2's T5 bucketing."""
    per_direction = rows // 2
    exact = per_direction // 2
    distance_of = [-1] * per_direction
    for distance in range(max_distance, -1, -1):
        if distance < exact:
            bucket = distance
        else:
            scaled = np.float32(math.log(np.float32(distance) / np.float32(exact))) / np.float32(
                math.log(np.float32(max_distance) / np.float32(exact)))
            bucket = min(int(np.float32(exact) + scaled * np.float32(per_direction - exact)), per_direction - 1)
        distance_of[bucket] = distance
    for b in range(1, per_direction):
        if distance_of[b] < 0:
            distance_of[b] = distance_of[b - 1]
    return np.array(distance_of, dtype=np.float32)


def expected_spec(config, tensors):
    """{CTranslate2 name: (type name, expected value)}: attributes and float32 tensors."""
    model, t = config["model"], config["model"]["transformer"]
    if model["type"] != "transformer":
        raise ValueError("model.type %s: not a Transformer" % model["type"])
    pre_norm = t["norm"] == "pre"
    positions, heads, width = t["positions"], t["heads"], t["d_model"]
    shared, tied = model["shared_embeddings"], model["tied_embeddings"]
    spec = {}

    def attr(name, type_name, value):
        spec[name] = (type_name, value)

    def param(name, attn_name):
        spec[name] = ("float32", tensors[attn_name])

    def linear(scope, attn_name):
        param(scope + "/weight", attn_name + ".weight")
        param(scope + "/bias", attn_name + ".bias")

    def norm(scope, attn_name):
        param(scope + "/gamma", attn_name + ".weight")
        param(scope + "/beta", attn_name + ".bias")

    def stack(name):
        attr(name + "/num_heads", "int16", heads)
        attr(name + "/pre_norm", "int8", int(pre_norm))
        attr(name + "/activation", "int8", {"relu": 0, "gelu": 3}[t["activation"]])
        attr(name + "/scale_embeddings", "int8", 1)
        if pre_norm:
            norm(name + "/layer_norm", name + ".final_norm")
        if positions == "sinusoidal":
            spec[name + "/position_encodings/encodings"] = ("float32", sinusoids(t["max_positions"], width))
        elif positions == "learned":
            param(name + "/position_encodings/encodings", "positions.weight")

    def self_attention(scope, attn_name):
        norm(scope + "/layer_norm", attn_name + ".self_attn_norm")
        linear(scope + "/linear_0", attn_name + ".self_attn.qkv")
        linear(scope + "/linear_1", attn_name + ".self_attn.out")
        if positions == "rotary":
            attr(scope + "/rotary_dim", "int32", 0)
            attr(scope + "/rotary_interleave", "int8", 1)
            attr(scope + "/rotary_base", "float32", 10000.0)

    def ffn(scope, attn_name):
        norm(scope + "/layer_norm", attn_name + ".ffn_norm")
        linear(scope + "/linear_0", attn_name + ".ffn.fc1")
        linear(scope + "/linear_1", attn_name + ".ffn.fc2")

    stack("encoder")
    attr("encoder/multi_query_attention", "int8", 0)
    attr("encoder/embeddings_merge", "int8", 0)
    param("encoder/embeddings_0/weight", "embedding.weight" if shared else "encoder.embedding.weight")
    exact = 4 * config["data"]["max_len"]
    for i in range(t["encoder_layers"]):
        scope, name = "encoder/layer_%d" % i, "encoder.layers.%d" % i
        self_attention(scope + "/self_attention", name)
        if positions == "alibi":
            distances = t5_bucket_distance(4 * exact, 2 * exact)
            one_side = -distances[:, None] * alibi_slopes(heads)[None, :]
            spec[scope + "/self_attention/relative_attention_bias"] = (
                "float32", np.concatenate([one_side, one_side]).astype(np.float32))
            attr(scope + "/self_attention/relative_attention_max_distance", "int32", 2 * exact)
        ffn(scope + "/ffn", name)

    stack("decoder")
    target = "embedding.weight" if shared else "decoder.embedding.weight"
    param("decoder/embeddings/weight", target)
    param("decoder/projection/weight", target if tied else "decoder.output.weight")
    attr("decoder/alignment_layer", "int16", -1)
    attr("decoder/alignment_heads", "int16", 1)
    attr("decoder/start_from_zero_embedding", "int8", 0)
    attr("decoder/alibi", "int8", int(positions == "alibi"))
    attr("decoder/alibi_use_positive_positions", "int8", 0)
    attr("decoder/scale_alibi", "int8", 0)
    for i in range(t["decoder_layers"]):
        scope, name = "decoder/layer_%d" % i, "decoder.layers.%d" % i
        self_attention(scope + "/self_attention", name)
        norm(scope + "/attention/layer_norm", name + ".cross_attn_norm")
        linear(scope + "/attention/linear_0", name + ".cross_attn.q")
        linear(scope + "/attention/linear_1", name + ".cross_attn.kv")
        linear(scope + "/attention/linear_2", name + ".cross_attn.out")
        ffn(scope + "/ffn", name)
    return spec


# ---- the checks -------------------------------------------------------------------------------

def to_bfloat16_bits(values):
    bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def int8_quantized(values):
    """CTranslate2's converters: scale = 127 / max|row| (127 for a zero row), rint(w * scale)."""
    values = values.astype(np.float32)
    amax = np.amax(np.absolute(values), axis=1)
    amax[amax == 0] = 127.0
    scale = (np.float32(127.0) / amax).astype(np.float32)
    return np.rint(values * scale[:, None]).astype(np.int8), scale


def check_tensor(name, expected, variables, problems, quantization):
    """Compares one float tensor of the spec with model.bin's (after alias resolution)."""
    type_id, stored = variables[name]
    if list(stored.shape) != list(expected.shape):
        problems.append("%s: shape %s, expected %s" % (name, list(stored.shape), list(expected.shape)))
        return
    quantizable = name.endswith("weight")
    if quantization == "int8" and quantizable:
        values, scale = int8_quantized(expected)
        stored_scale = variables.get(name + "_scale", (None, None))[1]
        if type_id != 1 or stored_scale is None:
            problems.append("%s: not int8 with %s_scale" % (name, name))
        elif not np.array_equal(stored, values) or not np.array_equal(stored_scale, scale):
            problems.append("%s: int8 values or scales differ from CTranslate2's quantisation" % name)
        elif np.max(np.abs(stored / stored_scale[:, None] - expected)) > np.max(np.abs(expected)) / 127 + 1e-7:
            problems.append("%s: dequantised int8 too far from the checkpoint" % name)
        return
    want = {"float16": 4, "bfloat16": 5}.get(quantization, 0)
    if type_id != want:
        problems.append("%s: type %s, expected %s" % (name, CT2_TYPE_NAMES[type_id], CT2_TYPE_NAMES[want]))
    elif want == 4 and not np.array_equal(stored, expected.astype(np.float16)):
        problems.append("%s: float16 values differ" % name)
    elif want == 5 and not np.array_equal(stored, to_bfloat16_bits(expected)):
        problems.append("%s: bfloat16 values differ" % name)
    elif want == 0 and not np.array_equal(stored, expected):
        worst = float(np.max(np.abs(stored - expected)))
        # Recomputed sinusoids may differ from attn's C++ ones in the last bit of a float.
        if not (name.endswith("position_encodings/encodings") and worst <= 1e-6):
            problems.append("%s: values differ from the checkpoint's (max |diff| %g)" % (name, worst))


def check_attribute(name, type_name, value, variables, problems):
    type_id, stored = variables[name]
    if stored.shape != ():
        problems.append("%s: rank %d, expected a scalar" % (name, stored.ndim))
    elif CT2_TYPE_NAMES[type_id] != type_name:
        problems.append("%s: type %s, expected %s" % (name, CT2_TYPE_NAMES[type_id], type_name))
    elif stored.item() != value:
        problems.append("%s: %r, expected %r" % (name, stored.item(), value))


def check_model(model_bin, spec, quantization, problems):
    name, revision, variables, aliases = model_bin
    if name != "TransformerSpec" or revision != 7:
        problems.append("spec %s revision %d, expected TransformerSpec revision 7" % (name, revision))
    for alias, target in aliases.items():
        if target not in variables:
            problems.append("alias %s names %s, which is not a variable" % (alias, target))
        elif alias in variables:
            problems.append("%s is both a variable and an alias" % alias)
    stored = set(variables) | set(aliases)
    scales = {n for n in variables if n.endswith("_scale")}
    for missing in sorted(set(spec) - stored):
        problems.append("missing: %s" % missing)
    for extra in sorted(stored - set(spec) - scales):
        problems.append("not in the spec: %s" % extra)
    if quantization != "int8" and scales:
        problems.append("scales without int8: %s" % sorted(scales)[0])
    resolved = dict(variables)
    for alias, target in aliases.items():
        if target in variables:
            resolved[alias] = variables[target]
            if target + "_scale" in variables:
                resolved[alias + "_scale"] = variables[target + "_scale"]
    for key, (type_name, value) in sorted(spec.items()):
        if key not in resolved:
            continue
        if isinstance(value, np.ndarray):
            check_tensor(key, value, resolved, problems, quantization)
        else:
            check_attribute(key, type_name, value, resolved, problems)
    return len(variables), len(aliases)


def spm_pieces(path):
    with open(path, encoding="utf-8") as vocab:
        return [line.rstrip("\n").split("\t")[0] for line in vocab]


def check_vocabularies(model_dir, run_dir, config, variables, aliases, problems):
    joint = config["vocab"]["joint"]
    source = spm_pieces(os.path.join(run_dir, "spm.vocab" if joint else "spm.src.vocab"))
    target = spm_pieces(os.path.join(run_dir, "spm.vocab" if joint else "spm.tgt.vocab"))
    files = sorted(f for f in os.listdir(model_dir) if "vocabulary" in f)
    if source == target:
        expected_files = {"shared_vocabulary.json": source}
    else:
        expected_files = {"source_vocabulary.json": source, "target_vocabulary.json": target}
    if files != sorted(expected_files):
        problems.append("vocabulary files %s, expected %s" % (files, sorted(expected_files)))
        return
    for file_name, pieces in expected_files.items():
        if json.load(open(os.path.join(model_dir, file_name), encoding="utf-8")) != pieces:
            problems.append("%s: not the run's pieces in id order" % file_name)
    rows = {"encoder/embeddings_0/weight": len(source), "decoder/embeddings/weight": len(target)}
    for name, count in rows.items():
        target_name = aliases.get(name, name)
        if target_name in variables and variables[target_name][1].shape[0] != count:
            problems.append("%s has %d rows for a vocabulary of %d" % (name, variables[target_name][1].shape[0], count))
    ct2_config = json.load(open(os.path.join(model_dir, "config.json"), encoding="utf-8"))
    expected = {"unk_token": target[1], "bos_token": target[2], "eos_token": target[3],
                "decoder_start_token": target[2], "add_source_bos": False, "add_source_eos": True,
                "layer_norm_epsilon": 1e-5, "multi_query_attention": False}
    if ct2_config != expected:
        problems.append("config.json %s, expected %s" % (ct2_config, expected))


# ---- greedy translation with CTranslate2's Transformer, as its source describes it -------------

class Ct2Transformer:
    """A CTranslate2 TransformerSpec model run in numpy from model.bin alone, following
    CTranslate2's src/layers/transformer.cc and attention.cc: embeddings x sqrt(D) + the stored
    position table, post- or pre-norm layers, T5 relative bias, rotary, decoder ALiBi."""

    def __init__(self, model_dir):
        _, _, variables, aliases = read_model_bin(os.path.join(model_dir, "model.bin"))
        self.v = {}
        for name, (type_id, array) in variables.items():
            self.v[name] = self._float(type_id, array)
        for alias, target in aliases.items():
            self.v[alias] = self.v[target]
            if target + "_scale" in self.v:
                self.v[alias + "_scale"] = self.v[target + "_scale"]
        for name in [n for n in self.v if n.endswith("_scale")]:  # int8: value / scale per row
            weight = name[:-len("_scale")]
            self.v[weight] = self.v[weight] / self.v[name][:, None]
        self.config = json.load(open(os.path.join(model_dir, "config.json"), encoding="utf-8"))
        self.epsilon = self.config.get("layer_norm_epsilon") or 1e-5

    @staticmethod
    def _float(type_id, array):
        if type_id == 5:  # bfloat16: the upper half of a float32
            return (array.astype(np.uint32) << 16).view(np.float32)
        return array.astype(np.float32) if type_id in (0, 4) else array

    def has(self, name):
        return name in self.v

    def norm(self, scope, x):
        mean = x.mean(-1, keepdims=True)
        variance = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(variance + self.epsilon) * self.v[scope + "/gamma"] + self.v[scope + "/beta"]

    def dense(self, scope, x):
        y = x @ self.v[scope + "/weight"].T
        return y + self.v[scope + "/bias"] if self.has(scope + "/bias") else y

    def activation(self, stack, x):
        if int(self.v[stack + "/activation"]) == 3:
            return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)).astype(np.float32))
        return np.maximum(x, 0)

    def rotate(self, scope, x):  # x (H, T, Dh) at positions 0..T-1; interleaved pairs
        depth = x.shape[-1]
        inv_freq = 1.0 / (float(self.v[scope + "/rotary_base"]) ** (np.arange(0, depth, 2) / depth))
        angles = np.arange(x.shape[1])[:, None] * inv_freq[None, :]
        cos, sin = np.repeat(np.cos(angles), 2, -1), np.repeat(np.sin(angles), 2, -1)
        turned = np.empty_like(x)
        turned[..., 0::2], turned[..., 1::2] = -x[..., 1::2], x[..., 0::2]
        return x * cos + turned * sin

    def t5_bias(self, scope, length):
        table, max_distance = self.v[scope + "/relative_attention_bias"], int(self.v[scope + "/relative_attention_max_distance"])
        per_direction = table.shape[0] // 2
        exact = per_direction // 2
        buckets = np.zeros((length, length), dtype=np.int64)
        for i in range(length):
            for j in range(length):
                relative, bucket = j - i, 0
                if relative > 0:
                    bucket = per_direction
                distance = abs(relative)
                if distance >= exact:
                    distance = min(int(exact + math.log(distance / exact) / math.log(max_distance / exact)
                                       * (per_direction - exact)), per_direction - 1)
                buckets[i, j] = bucket + distance
        return table[buckets].transpose(2, 0, 1)  # (H, T, T)

    def alibi(self, heads, keys):  # CTranslate2's slopes; negative positions ending at 0
        power = 2 ** int(math.floor(math.log2(heads)))
        base = 2.0 ** (-(2.0 ** -(math.log2(power) - 3)))
        slopes = [base ** p for p in range(1, power + 1)]
        if power != heads:
            extra = 2.0 ** (-(2.0 ** -(math.log2(2 * power) - 3)))
            slopes += [extra ** p for p in range(1, 2 * min(power, heads - power) + 1, 2)]
        return np.array(slopes, dtype=np.float32)[:, None, None] * (np.arange(keys) - (keys - 1))[None, None, :]

    def attention(self, stack, scope, queries, memory, causal):
        heads = int(self.v[stack + "/num_heads"])
        width = queries.shape[-1]
        depth = width // heads
        split = lambda x: x.reshape(x.shape[0], heads, depth).transpose(1, 0, 2)
        if memory is None:
            q, k, v = np.split(self.dense(scope + "/linear_0", queries), 3, axis=-1)
        else:
            q = self.dense(scope + "/linear_0", queries)
            k, v = np.split(self.dense(scope + "/linear_1", memory), 2, axis=-1)
        q, k, v = split(q), split(k), split(v)
        if self.has(scope + "/rotary_dim"):
            q, k = self.rotate(scope, q), self.rotate(scope, k)
        scores = (q @ k.transpose(0, 2, 1)) / math.sqrt(depth)
        if self.has(scope + "/relative_attention_bias"):
            scores = scores + self.t5_bias(scope, queries.shape[0])
        if causal and int(self.v.get(stack + "/alibi", 0)):
            scores = scores + self.alibi(heads, k.shape[1])
        if causal:
            scores = scores + np.triu(np.full(scores.shape[1:], -np.inf, dtype=np.float32), 1)
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        weights /= weights.sum(-1, keepdims=True)
        context = (weights @ v).transpose(1, 0, 2).reshape(queries.shape[0], width)
        return self.dense(scope + "/linear_%d" % (1 if memory is None else 2), context)

    def sublayer(self, stack, scope, x, branch):
        pre_norm = int(self.v[stack + "/pre_norm"])
        if pre_norm:
            return x + branch(self.norm(scope + "/layer_norm", x))
        return self.norm(scope + "/layer_norm", x + branch(x))

    def embed(self, stack, table, ids):
        x = self.v[table][ids] * math.sqrt(self.v[table].shape[1])
        if self.has(stack + "/position_encodings/encodings"):
            x = x + self.v[stack + "/position_encodings/encodings"][:len(ids)]
        return x

    def stack(self, name, x, memory=None):
        """The layers of "encoder" (self-attention, ffn) or "decoder" (causal self-attention,
        attention to memory, ffn), then the stack's final norm when it has one (pre-norm)."""
        layer = 0
        while self.has("%s/layer_%d/ffn/linear_0/weight" % (name, layer)):
            scope = "%s/layer_%d" % (name, layer)
            x = self.sublayer(name, scope + "/self_attention", x,
                              lambda h: self.attention(name, scope + "/self_attention", h, None, memory is not None))
            if memory is not None:
                x = self.sublayer(name, scope + "/attention", x,
                                  lambda h: self.attention(name, scope + "/attention", h, memory, False))
            x = self.sublayer(name, scope + "/ffn", x, lambda h: self.ffn(name, scope + "/ffn", h))
            layer += 1
        return self.norm(name + "/layer_norm", x) if self.has(name + "/layer_norm/gamma") else x

    def encode(self, ids):
        return self.stack("encoder", self.embed("encoder", "encoder/embeddings_0/weight", ids))

    def ffn(self, stack, scope, x):
        return self.dense(scope + "/linear_1", self.activation(stack, self.dense(scope + "/linear_0", x)))

    def next_logits(self, memory, ids):
        x = self.stack("decoder", self.embed("decoder", "decoder/embeddings/weight", ids), memory)
        return self.dense("decoder/projection", x[-1:])[0]

    def greedy(self, source_ids, start, end, max_length):
        memory, output = self.encode(np.array(source_ids)), [start]
        while len(output) - 1 < max_length:
            token = int(np.argmax(self.next_logits(memory, np.array(output))))
            output.append(token)
            if token == end:
                break
        return [t for t in output[1:] if t != end]


def translate(model_dir, ratio, extra, limit):
    """Source pieces on stdin, one sentence a line -> greedy target pieces on stdout, with the
    max_decoding_length docs/guide.md gives for attn's length rule."""
    model = Ct2Transformer(model_dir)
    config = model.config
    if os.path.exists(os.path.join(model_dir, "shared_vocabulary.json")):
        source = target = json.load(open(os.path.join(model_dir, "shared_vocabulary.json"), encoding="utf-8"))
    else:
        source = json.load(open(os.path.join(model_dir, "source_vocabulary.json"), encoding="utf-8"))
        target = json.load(open(os.path.join(model_dir, "target_vocabulary.json"), encoding="utf-8"))
    source_id = {piece: i for i, piece in enumerate(source)}
    for line in sys.stdin:
        pieces = line.split()
        if not pieces:
            print()
            continue
        ids = [source_id.get(p, source_id[config["unk_token"]]) for p in pieces][:limit - 1]
        if config["add_source_eos"]:
            ids.append(source_id[config["eos_token"]])
        max_length = max(min(int(np.float32(ratio) * np.float32(len(ids))) + extra, limit), 1)
        output = model.greedy(ids, target.index(config["decoder_start_token"]), target.index(config["eos_token"]),
                              max_length)
        print(" ".join(target[t] for t in output))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model_dir")
    parser.add_argument("--run", help="the attn run directory exported (the check)")
    parser.add_argument("--translate", nargs=3, type=float, metavar=("RATIO", "EXTRA", "LIMIT"),
                        help="instead of the check: translate source pieces from stdin greedily, with attn's "
                             "decode.max_len_ratio, max_len_extra and the model's length limit")
    parser.add_argument("--checkpoint", help="the checkpoint exported (default: the run's best)")
    parser.add_argument("--quantization", default="float32", choices=["float32", "int8", "float16", "bfloat16"])
    args = parser.parse_args()
    if args.translate:
        ratio, extra, limit = args.translate
        translate(args.model_dir, ratio, int(extra), int(limit))
        return 0
    if not args.run:
        parser.error("--run RUN is needed for the check")
    checkpoint = args.checkpoint or os.path.join(args.run, "checkpoint.best.safetensors")
    tensors, metadata = read_safetensors(checkpoint)
    config = json.loads(metadata["config"]) if "config" in metadata else json.load(open(os.path.join(args.run, "config.json")))
    problems = []
    model_bin = read_model_bin(os.path.join(args.model_dir, "model.bin"))
    count, aliases = check_model(model_bin, expected_spec(config, tensors), args.quantization, problems)
    check_vocabularies(args.model_dir, args.run, config, model_bin[2], model_bin[3], problems)
    for problem in problems:
        print("problem: " + problem)
    if problems:
        return 1
    print("ok: %s: %d variables and %d aliases match %s (%s)" % (args.model_dir, count, aliases, checkpoint,
                                                                  args.quantization))
    return 0


if __name__ == "__main__":
    sys.exit(main())
