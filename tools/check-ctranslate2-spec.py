#!/usr/bin/env python3
"""Manual check (not CI): attn-export's model.bin against CTranslate2's own serialiser.

Builds the TransformerSpec of the run with CTranslate2's Python spec code (from a CTranslate2
source tree: python/ctranslate2/specs, used without the compiled package), fills in the run's
checkpoint under the names tools/read-ctranslate2-model.py derives, lets CTranslate2 validate,
alias, quantise and save it, and compares the result with attn-export's directory: model.bin byte
for byte, config.json and the vocabularies as JSON. Needs numpy (and torch for bfloat16).

Usage: check-ctranslate2-spec.py --ct2-source DIR MODEL_DIR --run RUN [--quantization Q]
"""
import argparse
import importlib.util
import json
import os
import sys
import tempfile

import numpy as np


def load_ct2_specs(source):
    """CTranslate2's specs package as `ctranslate2.specs`, without its compiled extension."""
    package = tempfile.mkdtemp()
    os.makedirs(os.path.join(package, "ctranslate2"))
    open(os.path.join(package, "ctranslate2", "__init__.py"), "w").close()
    os.symlink(os.path.abspath(os.path.join(source, "python", "ctranslate2", "specs")),
               os.path.join(package, "ctranslate2", "specs"))
    sys.path.insert(0, package)
    from ctranslate2.specs import common_spec, model_spec, transformer_spec
    return common_spec, model_spec, transformer_spec


def load_reader():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "read-ctranslate2-model.py")
    spec = importlib.util.spec_from_file_location("read_ctranslate2_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build_spec(ct2, config, expected):
    common_spec, model_spec, transformer_spec = ct2
    t = config["model"]["transformer"]
    activation = common_spec.Activation.GELU if t["activation"] == "gelu" else common_spec.Activation.RELU
    pre_norm, positions = t["norm"] == "pre", t["positions"]
    rotary_dim = 0 if positions == "rotary" else None
    encoder = transformer_spec.TransformerEncoderSpec(
        t["encoder_layers"], t["heads"], pre_norm=pre_norm, activation=activation,
        relative_attention_bias=positions == "alibi", rotary_dim=rotary_dim)
    decoder = transformer_spec.TransformerDecoderSpec(
        t["decoder_layers"], t["heads"], pre_norm=pre_norm, activation=activation, alibi=positions == "alibi",
        alibi_use_positive_positions=False, rotary_dim=rotary_dim)
    spec = transformer_spec.TransformerSpec(encoder, decoder)
    for name, (type_name, value) in expected.items():
        scope, attribute = name.rsplit("/", 1)
        if isinstance(value, np.ndarray):
            setattr(model_spec.index_spec(spec, scope), attribute, np.array(value))
        elif attribute == "relative_attention_max_distance":  # set by a converter, not the constructor
            setattr(model_spec.index_spec(spec, scope), attribute, np.dtype("int32").type(value))
    return spec


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model_dir")
    parser.add_argument("--ct2-source", required=True, help="a CTranslate2 v4 source tree")
    parser.add_argument("--run", required=True)
    parser.add_argument("--quantization", default="float32", choices=["float32", "int8", "float16", "bfloat16"])
    args = parser.parse_args()
    reader = load_reader()
    tensors, metadata = reader.read_safetensors(os.path.join(args.run, "checkpoint.best.safetensors"))
    config = json.loads(metadata["config"])
    spec = build_spec(load_ct2_specs(args.ct2_source), config, reader.expected_spec(config, tensors))
    joint = config["vocab"]["joint"]
    spec.register_source_vocabulary(reader.spm_pieces(os.path.join(args.run, "spm.vocab" if joint else "spm.src.vocab")))
    spec.register_target_vocabulary(reader.spm_pieces(os.path.join(args.run, "spm.vocab" if joint else "spm.tgt.vocab")))
    spec.config.add_source_eos = True
    spec.config.layer_norm_epsilon = 1e-5
    spec.validate()
    spec.optimize(quantization=None if args.quantization == "float32" else args.quantization)
    theirs = tempfile.mkdtemp()
    spec.save(theirs)
    problems = []
    if open(os.path.join(theirs, "model.bin"), "rb").read() != open(os.path.join(args.model_dir, "model.bin"), "rb").read():
        problems.append("model.bin differs from CTranslate2's")
    for name in sorted(set(os.listdir(theirs)) | set(os.listdir(args.model_dir)) - {"model.bin"}):
        paths = [os.path.join(theirs, name), os.path.join(args.model_dir, name)]
        if not all(os.path.exists(p) for p in paths):
            problems.append("%s is in one directory only" % name)
        elif name != "model.bin" and json.load(open(paths[0])) != json.load(open(paths[1])):
            problems.append("%s differs from CTranslate2's" % name)
    for problem in problems:
        print("problem: " + problem)
    if not problems:
        print("ok: %s is what CTranslate2's own spec code writes for %s (%s)" % (args.model_dir, args.run,
                                                                             args.quantization))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
