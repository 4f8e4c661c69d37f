#!/usr/bin/env python3
"""Replays a training step of attn in PyTorch and compares every number.

    attn-bench grad --config C.json [--set k=v ...] --output step.safetensors
    tools/check-gradients.py step.safetensors
or both at once, for each of --precisions (default f32,bf16; what the ctest cases run):
    tools/check-gradients.py --attn-bench build/apps/attn-bench --config C.json [--set k=v ...]

The dump (docs/ARCHITECTURE.md, "Gradient dumps") holds a batch, the parameters before the step,
attn's logits, losses and gradients, and the parameters after 1 and 3 optimizer steps. This
script builds the model the dump's config describes from those parameters, written here from
the papers and attn's documented definitions (not from attn's code), runs the batch through
torch autograd in float64, takes 3 steps of torch.optim.AdamW with attn's clipping and
learning-rate schedule, and compares:

    logits, loss, nll, grad_norm    relative error, |a - t| / max|t|
    each gradient                   max|g_attn - g_torch| / max|g_torch|, per tensor
    parameters after 1 and 3 steps  max|p_attn - p_torch| / max|p_torch|, per tensor, the
                                    difference over the elements whose gradient the check
                                    resolves (below)

Adam divides each gradient element by its own magnitude, so an element whose gradient is small
against its tensor's largest (below TOLERANCES' "resolved" share at some step; e.g. the key
part of an attention bias, whose true gradient is exactly 0 because softmax does not see a
constant added to every score) moves by about lr whatever the sign of its rounding noise:
those elements are left out of the parameter comparison (the table counts them).

Exit status: 0 all within tolerance, 1 a miss, 2 bad input or attn-bench failed, 77 PyTorch or
NumPy missing, or no precision could run (no bf16 matmul on this CPU): ctest reports a skip.
"""
import argparse
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError as error:  # ctest's SKIP_RETURN_CODE
    print(f"check-gradients: skipped: {error} (install python3-torch)", file=sys.stderr)
    sys.exit(77)

PAD_ID = 0
MASK_VALUE = -1e9  # attn's additive mask: exp underflows to exactly 0, a fully masked row stays finite

# Tolerances per precision (docs/ARCHITECTURE.md, "Gradient dumps"), of the relative errors the
# module doc defines. "resolved": the parameter comparisons take the elements whose gradient is
# at least this share of its tensor's largest at every step (Adam's normalised step amplifies
# an element's relative gradient error by max|g| / |g_i|; the others are counted in the table).
# Step 1 of Adam takes only the sign of an element (m / sqrt(v) = g / |g|): it is held to 1e-5
# in both precisions. Steps 2 and 3 pass an element's relative gradient error on to its update
# (m / sqrt(v) is then a ratio of gradients), and a bias that starts at 0 is no larger than its
# updates: step 3 is held to the gradients' bound.
# f32: 1e-5 and 1e-4, the task's bounds; attn's errors are 1e-7 to 3e-5 (the largest in the
# key bias of the RNN's attention, whose gradient is a near-cancelling sum over positions).
# bf16: every matmul input and output gradient is rounded to 8 significant bits (spacing 2^-8),
# and in a fresh model the gradients are small differences of large terms: PyTorch itself with
# those roundings emulated is as far from float64 as attn is (the tiny Transformer: median 7%,
# largest 23% of a tensor's largest gradient; logits 0.7%, gradient norm 1%). The bounds are
# those with a margin: they catch a gross error, and step 1 keeps f32's bound. Adam's step 3
# then moves most elements by a ratio of gradients that bf16 does not resolve: it is held to
# one update (a rate or a bias correction twice too large still misses).
TOLERANCES = {
    "f32": {"logits": 1e-5, "scalar": 1e-5, "grad": 1e-4, "step1": 1e-5, "step3": 1e-4, "resolved": 1e-2},
    "bf16": {"logits": 3e-2, "scalar": 3e-2, "grad": 5e-1, "step1": 1e-5, "step3": 1.0, "resolved": 3e-1},
}


# ---------------------------------------------------------------------------------------------
# safetensors: 8-byte little-endian header length, JSON header, raw little-endian data.

DTYPES = {"F32": np.float32, "F64": np.float64, "I32": np.int32, "I64": np.int64}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + length])
    metadata = header.pop("__metadata__", {})
    base = 8 + length
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        values = np.frombuffer(data[base + begin : base + end], dtype=DTYPES[info["dtype"]])
        tensors[name] = torch.from_numpy(values.reshape(info["shape"]).copy())
    return tensors, metadata


# ---------------------------------------------------------------------------------------------
# Building blocks, float64.


def linear(P, name, x, bias=True):
    y = x @ P[name + ".weight"].T
    return y + P[name + ".bias"] if bias else y


def layer_norm(P, name, x):
    return F.layer_norm(x, x.shape[-1:], P[name + ".weight"], P[name + ".bias"], eps=1e-5)


def embed(table, ids):
    # The pad row is looked up like any other but gets no gradient.
    return F.embedding(ids, table, padding_idx=PAD_ID)


def padding_visible(lengths, keys):
    """(B, 1, 1, S): True at the real key positions."""
    return (torch.arange(keys)[None, :] < lengths[:, None])[:, None, None, :]


def alibi_slopes(heads):
    """The slopes of Press et al. 2022 (their reference code): 2^(-8/n) geometric for n a
    power of two, else those of the nearest lower power followed by every other of twice it."""

    def power_of_two(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]

    if math.log2(heads).is_integer():
        return power_of_two(heads)
    closest = 2 ** math.floor(math.log2(heads))
    return power_of_two(closest) + alibi_slopes(2 * closest)[0::2][: heads - closest]


def alibi_bias(heads, length):
    """(H, T, T): -m_h |i - j|, symmetric; under a causal mask it is the paper's -m_h (i - j)."""
    slopes = torch.tensor(alibi_slopes(heads), dtype=torch.float64)
    distance = (torch.arange(length)[:, None] - torch.arange(length)[None, :]).abs().double()
    return -slopes[:, None, None] * distance


def rotate(x):
    """RoFormer's rotation of (B, H, T, Dh): pair (2i, 2i+1) at position t turns by
    t * 10000^(-2i/Dh)."""
    length, width = x.shape[-2], x.shape[-1]
    theta = 10000.0 ** (-torch.arange(0, width, 2, dtype=torch.float64) / width)  # (Dh/2)
    angle = torch.arange(length, dtype=torch.float64)[:, None] * theta[None, :]  # (T, Dh/2)
    cos, sin = angle.cos(), angle.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def sinusoid_table(length, width):
    """Vaswani et al.: PE(p, 2i) = sin(p / 10000^(2i/D)), PE(p, 2i+1) = cos(the same)."""
    table = torch.zeros(length, width, dtype=torch.float64)
    position = torch.arange(length, dtype=torch.float64)[:, None]
    even = torch.arange(0, width, 2, dtype=torch.float64)
    angle = position / 10000.0 ** (even / width)
    table[:, 0::2] = angle.sin()
    table[:, 1::2] = angle.cos()[:, : width // 2]
    return table


# ---------------------------------------------------------------------------------------------
# The Transformer (Vaswani et al. 2017), post- or pre-norm.


class Transformer:
    def __init__(self, config, P):
        self.t = config["model"]["transformer"]
        self.P = P
        self.heads = self.t["heads"]
        self.width = self.t["d_model"]
        self.shared = config["model"]["shared_embeddings"]
        self.tied = config["model"]["tied_embeddings"]
        self.pre_norm = self.t["norm"] == "pre"
        self.positions = self.t["positions"]
        self.guided_layer = None  # set to record a decoder layer's cross-attention weights
        self.guided_weights = None

    def tables(self):
        if self.shared:
            return self.P["embedding.weight"], self.P["embedding.weight"]
        return self.P["encoder.embedding.weight"], self.P["decoder.embedding.weight"]

    def embed(self, table, ids):
        x = embed(table, ids) * math.sqrt(self.width)
        length = ids.shape[1]
        if self.positions == "sinusoidal":
            x = x + sinusoid_table(length, self.width)
        elif self.positions == "learned":
            x = x + self.P["positions.weight"][:length]
        return x

    def split(self, x):  # (B, T, D) -> (B, H, T, Dh)
        b, t, d = x.shape
        return x.view(b, t, self.heads, d // self.heads).transpose(1, 2)

    def attention(self, name, q, k, v, visible, bias=None):
        """Scaled dot-product attention; visible (B|1, 1, Tq, Tk) bool; bias (H, Tq, Tk)."""
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        if bias is not None:
            scores = scores + bias
        scores = scores + (~visible).double() * MASK_VALUE
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).flatten(2)  # (B, Tq, D)
        return linear(self.P, name + ".out", out), weights

    def self_attention(self, name, x, visible, bias):
        q, k, v = linear(self.P, name + ".qkv", x).split(self.width, dim=-1)
        q, k, v = self.split(q), self.split(k), self.split(v)
        if self.positions == "rotary":
            q, k = rotate(q), rotate(k)
        return self.attention(name, q, k, v, visible, bias)[0]

    def cross_attention(self, name, x, memory, visible):
        q = self.split(linear(self.P, name + ".q", x))
        k, v = linear(self.P, name + ".kv", memory).split(self.width, dim=-1)
        return self.attention(name, q, self.split(k), self.split(v), visible)

    def feed_forward(self, name, x):
        hidden = linear(self.P, name + ".fc1", x)
        hidden = F.relu(hidden) if self.t["activation"] == "relu" else F.gelu(hidden)  # erf form
        return linear(self.P, name + ".fc2", hidden)

    def residual(self, name, x, branch):
        if self.pre_norm:
            return x + branch(layer_norm(self.P, name, x))
        return layer_norm(self.P, name, x + branch(x))

    def bias(self, length):
        return alibi_bias(self.heads, length) if self.positions == "alibi" else None

    def encode(self, src, src_lengths):
        table = self.tables()[0]
        x = self.embed(table, src)
        visible = padding_visible(src_lengths, src.shape[1])
        bias = self.bias(src.shape[1])
        for i in range(self.t["encoder_layers"]):
            name = f"encoder.layers.{i}"
            attention = lambda y: self.self_attention(name + ".self_attn", y, visible, bias)
            x = self.residual(name + ".self_attn_norm", x, attention)
            x = self.residual(name + ".ffn_norm", x, lambda y: self.feed_forward(name + ".ffn", y))
        return layer_norm(self.P, "encoder.final_norm", x) if self.pre_norm else x

    def hidden(self, src, src_lengths, tgt_in):
        memory = self.encode(src, src_lengths)
        y = self.embed(self.tables()[1], tgt_in)
        length = tgt_in.shape[1]
        causal = torch.ones(length, length, dtype=torch.bool).tril()[None, None]
        memory_visible = padding_visible(src_lengths, src.shape[1])
        bias = self.bias(length)
        for i in range(self.t["decoder_layers"]):
            name = f"decoder.layers.{i}"
            attention = lambda x: self.self_attention(name + ".self_attn", x, causal, bias)
            y = self.residual(name + ".self_attn_norm", y, attention)

            def cross(x, name=name, i=i):
                out, weights = self.cross_attention(name + ".cross_attn", x, memory, memory_visible)
                if i == self.guided_layer:
                    self.guided_weights = weights
                return out

            y = self.residual(name + ".cross_attn_norm", y, cross)
            y = self.residual(name + ".ffn_norm", y, lambda x: self.feed_forward(name + ".ffn", x))
        return layer_norm(self.P, "decoder.final_norm", y) if self.pre_norm else y

    def logits(self, batch):
        h = self.hidden(batch["src"], batch["src_lengths"], batch["tgt_in"])
        return output_projection(self.P, h, self.tied, self.tables()[1])


def output_projection(P, hidden, tied, target_table):
    return hidden @ target_table.T if tied else linear(P, "decoder.output", hidden, bias=False)


# ---------------------------------------------------------------------------------------------
# The RNN encoder-decoder with additive attention (Bahdanau et al. 2015).


def gru(P, name, x, h):
    """PyTorch's GRU equations: r, z from [x; h]; n = tanh(W_in x + b_in + r * (W_hn h + b_hn));
    h' = (1 - z) n + z h. Gate blocks in the order r, z, n."""
    xr, xz, xn = linear(P, name + ".input", x).chunk(3, dim=-1)
    hr, hz, hn = linear(P, name + ".hidden", h).chunk(3, dim=-1)
    r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
    n = torch.tanh(xn + r * hn)
    return (1 - z) * n + z * h, None


def lstm(P, name, x, h, c):
    """Hochreiter & Schmidhuber with a forget gate; gate blocks in the order i, f, g, o."""
    gates = linear(P, name + ".input", x) + linear(P, name + ".hidden", h)
    i, f, g, o = gates.chunk(4, dim=-1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


class Rnn:
    def __init__(self, config, P):
        self.r = config["model"]["rnn"]
        self.P = P
        self.cell_type = self.r["cell"]
        self.shared = config["model"]["shared_embeddings"]
        self.tied = config["model"]["tied_embeddings"]
        self.guided_weights = None  # guided alignment pulls a Transformer's cross attention only

    def tables(self):
        if self.shared:
            return self.P["embedding.weight"], self.P["embedding.weight"]
        return self.P["encoder.embedding.weight"], self.P["decoder.embedding.weight"]

    def cell(self, name, x, state):
        h, c = state
        if self.cell_type == "gru":
            return gru(self.P, name + "gru", x, h)
        return lstm(self.P, name + "lstm", x, h, c)

    def zero_state(self, rows, width):
        zeros = torch.zeros(rows, width, dtype=torch.float64)
        return zeros, zeros if self.cell_type == "lstm" else None

    def direction(self, name, x, lengths, reverse):
        """Each sentence's own tokens only: on padding the state is kept (h and c), so the
        backward direction starts at the last real token."""
        rows, length, _ = x.shape
        state = self.zero_state(rows, self.r["encoder_hidden"])
        states = [None] * length
        order = range(length - 1, -1, -1) if reverse else range(length)
        for t in order:
            new = self.cell(name, x[:, t], state)
            real = (t < lengths)[:, None]
            state = tuple(None if n is None else torch.where(real, n, s) for n, s in zip(new, state))
            states[t] = state[0]
        return torch.stack(states, dim=1)

    def attend(self, keys, states, visible, s):
        """e_i = v^T tanh(W_q s + W_k h_i + b_k); a = softmax over the real positions."""
        query = linear(self.P, "decoder.attention.query", s, bias=False)  # (B, A)
        scores = linear(self.P, "decoder.attention.v", torch.tanh(keys + query[:, None, :]), bias=False)[..., 0]
        weights = torch.softmax(scores + (~visible).double() * MASK_VALUE, dim=-1)  # (B, S)
        return (weights[:, :, None] * states).sum(1)

    def logits(self, batch):
        src, lengths, tgt_in = batch["src"], batch["src_lengths"], batch["tgt_in"]
        source_table, target_table = self.tables()
        x = embed(source_table, src)
        forward = self.direction("encoder.forward_", x, lengths, False)
        backward = self.direction("encoder.backward_", x, lengths, True)
        states = torch.cat([forward, backward], dim=-1)  # (B, S, 2H)
        visible = torch.arange(src.shape[1])[None, :] < lengths[:, None]
        mean = (states * visible[..., None]).sum(1) / lengths[:, None].double()
        s = torch.tanh(linear(self.P, "decoder.init", mean))
        state = (s, torch.zeros_like(s) if self.cell_type == "lstm" else None)
        keys = linear(self.P, "decoder.attention.key", states)
        y = embed(target_table, tgt_in)
        features = []
        for t in range(tgt_in.shape[1]):
            context = self.attend(keys, states, visible, state[0])
            state = self.cell("decoder.", torch.cat([y[:, t], context], dim=-1), state)
            features.append(torch.cat([state[0], context, y[:, t]], dim=-1))
        hidden = torch.tanh(linear(self.P, "decoder.pre_output", torch.stack(features, dim=1)))
        return output_projection(self.P, hidden, self.tied, target_table)


# ---------------------------------------------------------------------------------------------
# Losses and the update.


def smoothed_cross_entropy(logits, targets, smoothing):
    """Sums over the non-pad targets: q = (1 - eps) onehot(y) + eps / V; loss -sum_j q_j log p_j;
    and the unsmoothed -log p_y."""
    log_p = torch.log_softmax(logits, dim=-1)
    real = targets != PAD_ID
    nll = -log_p.gather(-1, targets[..., None].long())[..., 0]
    uniform = -log_p.mean(-1)
    loss = (1 - smoothing) * nll + smoothing * uniform
    return (loss * real).sum(), (nll * real).sum(), int(real.sum())


def guided_targets(batch, shape, shift):
    """(B, T, S): row t + shift of sentence b spreads 1 over the sources linked to target t."""
    targets = torch.zeros(shape, dtype=torch.float64)
    for b, s, t in batch["links"].tolist():
        targets[b, t + shift, s] = 1.0
    return targets / targets.sum(-1, keepdim=True).clamp(min=1.0)


def guided_loss(weights, targets, guided):
    """Garg et al. 2019 / Marian: the guided head's (or the heads' mean) weights P against the
    reference rows A, over the linked rows: ce -sum A log(P + 1e-6), or mse sum (P - A)^2."""
    head = guided["head"]
    p = weights.mean(1) if head == "mean" else weights[:, int(head)]
    linked = targets.sum(-1) > 0
    if guided["cost"] == "ce":
        rows = -(targets * torch.log(p + 1e-6)).sum(-1)
    else:
        rows = ((p - targets) ** 2).sum(-1)
    return (rows * linked).sum(), int(linked.sum())


def learning_rate(train, width, step):
    lr, warmup = train["learning_rate"], max(train["warmup_steps"], 1)
    if train["schedule"] == "constant":
        return lr
    if train["schedule"] == "inverse_sqrt":
        return lr * step / warmup if step < warmup else lr * math.sqrt(warmup / step)
    return lr / math.sqrt(width) * min(step**-0.5, step * warmup**-1.5)  # noam


class Replay:
    """The model, the loss of one optimizer step and AdamW, on float64 leaves of the dump's
    parameters (each name one leaf: a tied or shared table is one tensor used in several places,
    so autograd sums its gradients)."""

    def __init__(self, dump, config):
        self.config = config
        self.train = config["train"]
        self.names = [n[len("param.") :] for n in dump if n.startswith("param.")]
        self.P = {n: dump["param." + n].double().requires_grad_() for n in self.names}
        self.batch = {k: dump[k].long() for k in ("src", "src_lengths", "tgt_in", "tgt_out", "links")}
        family = config["model"]["type"]
        self.model = Transformer(config, self.P) if family == "transformer" else Rnn(config, self.P)
        model = config["model"]
        self.width = model["transformer"]["d_model"] if family == "transformer" else model["rnn"]["decoder_hidden"]
        self.guided = self.train["guided_alignment"]
        if self.guided["weight"] > 0:
            layers = config["model"]["transformer"]["decoder_layers"]
            self.model.guided_layer = self.guided["layer"] % layers
        self.optimizer = torch.optim.AdamW(
            list(self.P.values()),
            lr=0.0,
            betas=(self.train["adam_beta1"], self.train["adam_beta2"]),
            eps=self.train["adam_epsilon"],
            weight_decay=self.train["weight_decay"],
        )

    def loss(self):
        """The step's loss: smoothed cross-entropy per target token (+ weight x the guided loss
        per linked row). Returns it and the figures the dump reports."""
        logits = self.model.logits(self.batch)
        targets = self.batch["tgt_out"]
        loss_sum, nll_sum, tokens = smoothed_cross_entropy(logits, targets, self.train["label_smoothing"])
        figures = {"logits": logits, "loss": loss_sum / tokens, "nll": nll_sum / tokens}
        total = loss_sum / tokens
        if self.model.guided_weights is not None and len(self.batch["links"]) > 0:
            w = self.model.guided_weights
            a = guided_targets(self.batch, (w.shape[0], w.shape[2], w.shape[3]), self.guided["shift"])
            guided_sum, rows = guided_loss(w, a, self.guided)
            figures["guided_loss"] = guided_sum / rows
            total = total + self.guided["weight"] * guided_sum / rows
        return total, figures

    def gradients(self):
        self.optimizer.zero_grad(set_to_none=False)
        total, figures = self.loss()
        total.backward()
        for p in self.P.values():
            if p.grad is None:  # a parameter the loss does not reach has a zero gradient, as in attn
                p.grad = torch.zeros_like(p)
        norm = math.sqrt(sum(float((p.grad**2).sum()) for p in self.P.values()))
        figures["grad_norm"] = norm
        return figures

    def step(self, step):
        """Clips to train.clip_norm (when the norm exceeds it), then AdamW at the schedule's rate."""
        norm = math.sqrt(sum(float((p.grad**2).sum()) for p in self.P.values()))
        clip = self.train["clip_norm"]
        if clip > 0 and norm > clip:
            for p in self.P.values():
                p.grad.mul_(clip / norm)
        for group in self.optimizer.param_groups:
            group["lr"] = learning_rate(self.train, self.width, step)
        self.optimizer.step()

    def snapshot(self, what):
        return {n: (p.grad if what == "grad" else p).detach().clone() for n, p in self.P.items()}


# ---------------------------------------------------------------------------------------------
# Comparison.


def relative(a, t, mask=None):
    """max|a - t| (over the elements of `mask`, default all) / max|t| (over all)."""
    a, t = a.double(), t.double()
    if t.numel() == 0:
        return 0.0
    scale = float(t.abs().max())
    difference = (a - t).abs()
    if mask is not None:
        difference = difference[mask]
    diff = float(difference.max()) if difference.numel() else 0.0
    return diff / scale if scale > 0 else diff


def resolved(gradients, tolerance):
    """Elements whose gradient exceeds what the check resolves at every step (module doc)."""
    masks = {}
    for grads in gradients:
        for n, g in grads.items():
            m = g.abs() > tolerance * float(g.abs().max())
            masks[n] = m if n not in masks else masks[n] & m
    return masks


def compare(dump, metadata, show):
    config = json.loads(metadata["config"])
    precision = metadata["precision"]
    tol = TOLERANCES[precision]
    replay = Replay(dump, config)
    rows = []  # (kind, name, error, tolerance, note)

    figures = replay.gradients()
    real = (replay.batch["tgt_out"] != PAD_ID)[..., None].expand_as(figures["logits"])
    rows.append(("logits", "logits", relative(dump["logits"], figures["logits"].detach(), real), tol["logits"], ""))
    for name in ("loss", "nll", "grad_norm", "guided_loss"):
        if name in dump or name in figures:
            if name not in dump or name not in figures:
                rows.append(("scalar", name, math.inf, tol["scalar"], "in one of the two only"))
                continue
            reference = torch.tensor(float(figures[name]), dtype=torch.float64)
            rows.append(("scalar", name, relative(dump[name], reference), tol["scalar"], ""))

    grads = [replay.snapshot("grad")]
    for n in replay.names:
        rows.append(("grad", n, relative(dump["grad." + n], grads[0][n]), tol["grad"], ""))
    replay.step(1)
    after = {1: replay.snapshot("param")}
    for step in (2, 3):
        replay.gradients()
        grads.append(replay.snapshot("grad"))
        replay.step(step)
    after[3] = replay.snapshot("param")

    masks = resolved(grads, tol["resolved"])
    for step in (1, 3):
        for n in replay.names:
            left_out = int((~masks[n]).sum())
            note = f"{left_out} of {masks[n].numel()} unresolved left out" if left_out else ""
            error = relative(dump[f"step{step}." + n], after[step][n], masks[n])
            rows.append((f"step{step}", n, error, tol[f"step{step}"], note))
    return report(rows, precision, show)


def report(rows, precision, show):
    worst = sorted(rows, key=lambda r: r[2] / r[3], reverse=True)
    misses = [r for r in rows if not r[2] <= r[3]]
    print(f"{'kind':<7} {'tensor':<48} {'rel. error':>11} {'tolerance':>10}  note")
    for kind, name, error, tolerance, note in worst[:show]:
        flag = "MISS" if not error <= tolerance else ""
        print(f"{kind:<7} {name:<48} {error:>11.3e} {tolerance:>10.0e}  {flag} {note}".rstrip())
    by_kind = {}
    for kind, _, error, _, _ in rows:
        by_kind[kind] = max(by_kind.get(kind, 0.0), error)
    summary = ", ".join(f"{k} {v:.2e}" for k, v in by_kind.items())
    print(f"{precision}: {len(rows)} comparisons, {len(misses)} misses; worst per kind: {summary}")
    return 1 if misses else 0


class NoBf16(Exception):
    pass


def dump_with(args, precision, directory):
    """Runs attn-bench grad with the arguments given at `precision`; returns the dump's path."""
    path = os.path.join(directory, f"step-{precision}.safetensors")
    command = [args.attn_bench, "grad", "--config", args.config, "--output", path]
    for override in (args.set or []) + [f"train.precision={precision}"]:
        command += ["--set", override]
    if args.unfused_loss:
        command.append("--unfused-loss")
    if args.corpus:
        command.append("--corpus")
    print(" ".join(command))
    run = subprocess.run(command, stderr=subprocess.PIPE, text=True)
    sys.stderr.write(run.stderr)
    if run.returncode != 0 and "no bf16 matmul" in run.stderr:
        raise NoBf16()
    run.check_returncode()
    return path


def run_cases(args):
    """Dumps and checks each precision of --precisions; 77 when none could run."""
    status, checked = 0, 0
    with tempfile.TemporaryDirectory() as directory:
        for precision in args.precisions.split(","):
            try:
                path = dump_with(args, precision, directory)
            except NoBf16:
                print(f"check-gradients: {precision} skipped: this CPU has no bf16 matmul", file=sys.stderr)
                continue
            except subprocess.CalledProcessError as error:
                print(f"check-gradients: attn-bench grad failed with exit status {error.returncode}", file=sys.stderr)
                return 2
            status = max(status, check(path, args.show))
            checked += 1
    return status if checked else 77


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dump", nargs="?", help="the safetensors file of attn-bench grad")
    parser.add_argument("--show", type=int, default=8, help="rows of the worst-tensor table")
    parser.add_argument("--attn-bench", help="run this attn-bench to make the dumps (with --config, --set)")
    parser.add_argument("--config", help="with --attn-bench: the config")
    parser.add_argument("--set", action="append", help="with --attn-bench: a config override (repeatable)")
    parser.add_argument("--unfused-loss", action="store_true", help="with --attn-bench: the unfused loss")
    parser.add_argument("--corpus", action="store_true", help="with --attn-bench: the corpus's first batch")
    parser.add_argument("--precisions", default="f32,bf16", help="with --attn-bench: a dump and check for each")
    args = parser.parse_args()
    if bool(args.dump) == bool(args.attn_bench) or bool(args.attn_bench) != bool(args.config):
        parser.error("give a dump, or --attn-bench with --config")
    torch.set_num_threads(1)
    return run_cases(args) if args.attn_bench else check(args.dump, args.show)


def check(path, show):
    try:
        dump, metadata = read_safetensors(path)
    except (OSError, ValueError, KeyError) as error:
        print(f"check-gradients: {path}: {error}", file=sys.stderr)
        return 2
    if metadata.get("format") != "attn-grad-dump/1":
        found = metadata.get("format")
        print(f"check-gradients: {path}: not an attn-bench grad dump (metadata format {found!r})", file=sys.stderr)
        return 2
    return compare(dump, metadata, show)


if __name__ == "__main__":
    sys.exit(main())
