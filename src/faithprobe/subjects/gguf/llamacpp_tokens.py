"""A GGUF file's own tokenizer and chat template as llama.cpp reads them, behind the part of
a Hugging Face tokenizer's interface that the causal-LM prompt convention uses (calling it on
a text, ``decode``, ``apply_chat_template``, the BOS and EOS ids), so the helpers of
:mod:`faithprobe.subjects.bounds` and the llama.cpp subject
(:mod:`~faithprobe.subjects.gguf.llamacpp`) tokenize exactly as
:class:`~faithprobe.subjects.hf.causal.HFCausal` does on the same file dequantised.

Each call follows the Hugging Face default it stands for: special-token strings in a text
are read as those tokens, the tokenizer's special tokens (BOS where the file asks for one)
are added unless ``add_special_tokens`` is off, decoding skips control tokens only when
asked and cleans no spaces up, and a SentencePiece tokenizer that puts a space before a
text drops it again when decoding (llama.cpp's ``add_space_prefix``; the Hugging Face
decoder's ``Strip``). The chat template (the file's ``tokenizer.chat_template``) is rendered
by llama-cpp-python's Jinja2 formatter, which follows transformers' sandbox and filters.
"""

from __future__ import annotations

import ctypes

PIECE_BYTES = 256  # the longest token text read in one call (llama.cpp asks again if longer)


class GGUFTokenizer:
    """The tokenizer of the GGUF file a ``llama_cpp.Llama`` has loaded (module docstring)."""

    def __init__(self, llama) -> None:
        import llama_cpp

        self._llama = llama
        self._vocab = llama_cpp.llama_model_get_vocab(llama.model)
        metadata = llama.metadata
        bos, eos = llama.token_bos(), llama.token_eos()
        self.bos_token_id = bos if bos >= 0 else None
        self.eos_token_id = eos if eos >= 0 else None
        self.chat_template: str | None = metadata.get("tokenizer.chat_template") or None
        spm = metadata.get("tokenizer.ggml.model") == "llama"
        self._space_prefix = metadata.get("tokenizer.ggml.add_space_prefix", str(spm)) == "true"

    def __call__(self, text: str, add_special_tokens: bool = True) -> dict[str, list[int]]:
        ids = self._llama.tokenize(text.encode("utf-8"), add_bos=add_special_tokens, special=True)
        return {"input_ids": ids}

    def decode(
        self,
        ids: list[int],
        skip_special_tokens: bool = False,
        clean_up_tokenization_spaces: bool = False,
    ) -> str:
        """The text of ``ids``: their pieces joined (control tokens left out when
        ``skip_special_tokens``), bytes that are no whole UTF-8 character as U+FFFD."""
        if clean_up_tokenization_spaces:
            raise ValueError("llama.cpp's tokenizer decodes without cleaning spaces up")
        pieces = [
            self._piece(token, strip=i == 0 and self._space_prefix, special=not skip_special_tokens)
            for i, token in enumerate(ids)
        ]
        return b"".join(pieces).decode("utf-8", errors="replace")

    def _piece(self, token: int, *, strip: bool, special: bool) -> bytes:
        import llama_cpp

        buffer = ctypes.create_string_buffer(PIECE_BYTES)
        n = llama_cpp.llama_token_to_piece(self._vocab, token, buffer, PIECE_BYTES, strip, special)
        if n < 0:  # a longer piece: llama.cpp says how long
            buffer = ctypes.create_string_buffer(-n)
            n = llama_cpp.llama_token_to_piece(self._vocab, token, buffer, -n, strip, special)
        return buffer.raw[:n]

    def token_text(self, token: int | None) -> str:
        """A special token's text (what a chat template writes for it); "" for None."""
        return "" if token is None else self.decode([token])

    def apply_chat_template(
        self,
        messages: list[dict[str, str]],
        tokenize: bool = False,
        add_generation_prompt: bool = True,
    ) -> str:
        """``messages`` rendered by the file's chat template (the caller checks there is one)."""
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        if tokenize:
            raise ValueError("the chat template is rendered to text; tokenize it after")
        formatter = Jinja2ChatFormatter(
            self.chat_template or "",
            eos_token=self.token_text(self.eos_token_id),
            bos_token=self.token_text(self.bos_token_id),
            add_generation_prompt=add_generation_prompt,
        )
        return formatter(messages=messages).prompt
