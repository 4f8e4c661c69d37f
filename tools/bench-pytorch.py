#!/usr/bin/env python3
"""PyTorch's side of `attn-bench train`: the same model, batch shape and update rule, timed the
same way, so that the README's "attn / PyTorch" figures can be reproduced on any machine.

    tools/bench-pytorch.py --config configs/bench/transformer-small.json \
        --batch-sentences 64 --src-len 24 --tgt-len 24 --steps 10 [--precision bf16] [--json]

The model follows the config's model.* keys as attn builds them: a post-norm Transformer (or
a bidirectional GRU encoder with an additive-attention GRU decoder), one embedding table shared
by source, target and the output projection, label-smoothed cross-entropy (0.1), global-norm
clipping at 1, Adam (0.9, 0.98, 1e-9). A step is forward + backward + clip + Adam on one
synthetic batch of random ids (no padding), as attn-bench times it; the median of the timed
steps is reported. bf16 runs under torch.autocast (bf16 matmuls, f32 master weights).

Needs python3-torch (Debian 12: tools/install-pytorch-deps.sh). Run it on a quiet machine.
"""
import argparse
import json
import math
import re
import resource
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def read_config(path):
    """attn's configs are JSON with // and /* */ comments (outside strings)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', lambda m: m.group(1) or "", text, flags=re.S)
    return json.loads(text)


def sinusoids(length, width):
    position = torch.arange(length, dtype=torch.float32).unsqueeze(1)
    rate = torch.exp(torch.arange(0, width, 2, dtype=torch.float32) * (-math.log(10000.0) / width))
    table = torch.zeros(length, width)
    table[:, 0::2] = torch.sin(position * rate)
    table[:, 1::2] = torch.cos(position * rate)
    return table


class Transformer(nn.Module):
    def __init__(self, vocab, t):
        super().__init__()
        self.width = t["d_model"]
        self.embedding = nn.Embedding(vocab, self.width)
        self.register_buffer("positions", sinusoids(t.get("max_positions", 256), self.width))
        dropout = t.get("dropout", 0.1)
        self.core = nn.Transformer(d_model=self.width, nhead=t["heads"], num_encoder_layers=t["encoder_layers"],
                                   num_decoder_layers=t["decoder_layers"], dim_feedforward=t["ffn_dim"],
                                   dropout=dropout, batch_first=True, norm_first=False)
        self.dropout = nn.Dropout(dropout)

    def embed(self, ids):  # (B, T) -> (B, T, D)
        return self.dropout(self.embedding(ids) * math.sqrt(self.width) + self.positions[: ids.shape[1]])

    def forward(self, src, tgt_in):  # -> logits (B, T, V)
        causal = self.core.generate_square_subsequent_mask(tgt_in.shape[1])
        hidden = self.core(self.embed(src), self.embed(tgt_in), tgt_mask=causal)
        return hidden @ self.embedding.weight.t()


class RnnAttention(nn.Module):
    def __init__(self, vocab, r):
        super().__init__()
        emb, enc, dec, att = r["embedding_dim"], r["encoder_hidden"], r["decoder_hidden"], r["attention_dim"]
        self.embedding = nn.Embedding(vocab, emb)
        self.encoder = nn.GRU(emb, enc, batch_first=True, bidirectional=True)
        self.init = nn.Linear(2 * enc, dec)
        self.query = nn.Linear(dec, att, bias=False)
        self.key = nn.Linear(2 * enc, att)
        self.v = nn.Linear(att, 1, bias=False)
        self.cell = nn.GRUCell(emb + 2 * enc, dec)
        self.pre_output = nn.Linear(dec + 2 * enc + emb, emb)
        self.dropout = nn.Dropout(r.get("dropout", 0.1))

    def forward(self, src, tgt_in):
        states, _ = self.encoder(self.dropout(self.embedding(src)))  # (B, S, 2H)
        keys = self.key(states)                                        # (B, S, A)
        h = torch.tanh(self.init(states.mean(dim=1)))                  # (B, Hd)
        embedded = self.dropout(self.embedding(tgt_in))                # (B, T, E)
        features = []
        for t in range(tgt_in.shape[1]):
            scores = self.v(torch.tanh(keys + self.query(h).unsqueeze(1))).squeeze(2)  # (B, S)
            context = torch.bmm(F.softmax(scores, dim=1).unsqueeze(1), states).squeeze(1)
            h = self.cell(torch.cat([embedded[:, t], context], dim=1), h)
            features.append(torch.cat([h, context, embedded[:, t]], dim=1))
        hidden = torch.tanh(self.pre_output(self.dropout(torch.stack(features, dim=1))))
        return hidden @ self.embedding.weight.t()


def blas_library():
    """The BLAS this process has loaded (Debian's torch calls whatever libblas.so.3 points to)."""
    with open("/proc/self/maps", encoding="utf-8") as maps:
        paths = {line.split()[-1].rsplit("/", 1)[-1] for line in maps if "blas" in line.split()[-1]}
    return " ".join(sorted(paths)) or "?"


def build(config, vocab):
    model = config["model"]
    if model["type"] == "transformer":
        return Transformer(vocab, model["transformer"])
    if model["type"] == "rnn":
        return RnnAttention(vocab, model["rnn"])
    sys.exit(f"bench-pytorch: {model['type']}: model.type must be transformer or rnn")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", required=True)
    parser.add_argument("--batch-sentences", type=int, default=64)
    parser.add_argument("--src-len", type=int, default=24)
    parser.add_argument("--tgt-len", type=int, default=24)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--precision", choices=["f32", "bf16"], default="f32")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    torch.manual_seed(1)
    torch.set_num_threads(args.threads)
    config = read_config(args.config)
    vocab = config["vocab"]["size"]
    model = build(config, vocab)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    src = torch.randint(4, vocab, (args.batch_sentences, args.src_len))
    tgt = torch.randint(4, vocab, (args.batch_sentences, args.tgt_len + 1))
    tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]

    def step():
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.precision == "bf16"):
            logits = model(src, tgt_in)
        loss = F.cross_entropy(logits.float().reshape(-1, vocab), tgt_out.reshape(-1), label_smoothing=0.1)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()

    seconds = []
    for i in range(args.warmup + args.steps):
        start = time.perf_counter()
        step()
        if i >= args.warmup:
            seconds.append(time.perf_counter() - start)
    median = statistics.median(seconds)
    result = {
        "framework": f"pytorch {torch.__version__}",
        "precision": args.precision,
        "threads": args.threads,
        "parameters": sum(p.numel() for p in model.parameters()),
        "step_median_s": median,
        "step_min_s": min(seconds),
        "step_max_s": max(seconds),
        "tokens_per_s": args.batch_sentences * args.tgt_len / median,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "blas": blas_library(),
    }
    if args.json:
        print(json.dumps(result, sort_keys=True))
    else:
        print(f"{result['framework']} {args.precision}: {median:.3f} s/step, {result['tokens_per_s']:,.0f} target "
              f"tokens/s, peak RSS {result['peak_rss_mb']:.0f} MB ({result['parameters']:,} parameters)")


if __name__ == "__main__":
    main()
