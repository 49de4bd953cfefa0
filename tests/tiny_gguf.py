"""Write a Hugging Face Llama and its byte-level BPE tokenizer as a GGUF file, the way
llama.cpp's converter does, with float32 tensors (no quantisation): names ``blk.N.attn_q``
and so on, Q and K rows permuted for llama.cpp's rotary layout, the tokenizer as
``tokenizer.ggml.*`` metadata. Enough for transformers' GGUF loader to rebuild the same
model, so the two can be compared."""

from __future__ import annotations

import json
from pathlib import Path

import gguf
import numpy as np

CONTROL, NORMAL = 3, 1  # llama.cpp token types


def _permute(weights: np.ndarray, heads: int) -> np.ndarray:
    """llama.cpp's Q/K row order (transformers undoes it when it loads the file)."""
    return (
        weights.reshape(heads, 2, weights.shape[0] // heads // 2, *weights.shape[1:])
        .swapaxes(1, 2)
        .reshape(weights.shape)
    )


def write_llama_gguf(model, tokenizer, path: Path, chat_template: str | None = None) -> Path:
    config = model.config
    head_dim = config.hidden_size // config.num_attention_heads
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("tiny-llama")
    writer.add_context_length(config.max_position_embeddings)
    writer.add_embedding_length(config.hidden_size)
    writer.add_block_count(config.num_hidden_layers)
    writer.add_feed_forward_length(config.intermediate_size)
    writer.add_head_count(config.num_attention_heads)
    writer.add_head_count_kv(config.num_key_value_heads)
    writer.add_layer_norm_rms_eps(config.rms_norm_eps)
    writer.add_rope_freq_base(config.rope_parameters["rope_theta"])
    writer.add_rope_dimension_count(head_dim)
    writer.add_vocab_size(config.vocab_size)

    vocab = sorted(tokenizer.get_vocab().items(), key=lambda item: item[1])
    specials = set(tokenizer.all_special_tokens)
    merges = json.loads(tokenizer.backend_tokenizer.to_str())["model"]["merges"]
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list([token for token, _ in vocab])
    writer.add_token_types([CONTROL if token in specials else NORMAL for token, _ in vocab])
    writer.add_token_merges([" ".join(merge) for merge in merges])
    writer.add_bos_token_id(tokenizer.bos_token_id)
    writer.add_eos_token_id(tokenizer.eos_token_id)
    writer.add_unk_token_id(tokenizer.unk_token_id)
    writer.add_pad_token_id(tokenizer.pad_token_id)
    writer.add_add_bos_token(False)
    if chat_template:
        writer.add_chat_template(chat_template)

    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, config.num_hidden_layers)
    for name, tensor in model.state_dict().items():
        weights = tensor.detach().float().numpy()
        if name.endswith("q_proj.weight"):
            weights = _permute(weights, config.num_attention_heads)
        elif name.endswith("k_proj.weight"):
            weights = _permute(weights, config.num_key_value_heads)
        writer.add_tensor(names.get_name(name, try_suffixes=(".weight",)), weights)

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
