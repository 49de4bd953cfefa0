"""What the two runtimes of a GGUF model share between the backends that name one
(``gguf:PATH``, ``embedded``): the request kinds each answers, and loading a file under
llama.cpp by its settings. Imports nothing heavy (backend modules import it)."""

from __future__ import annotations

from pathlib import Path

from faithprobe.requests import CandidateScoreRequest, GenerationRequest, PromptSaliencyRequest
from faithprobe.subjects.gguf.settings import GGUFSettings

# request kind -> the condition under which a GGUF model answers it (llama.cpp gives no
# gradients, so prompt saliency needs the dequantised model)
ANSWERS = {
    CandidateScoreRequest.kind: "",
    GenerationRequest.kind: "",
    PromptSaliencyRequest.kind: "runtime=transformers",
}


def load_under_llamacpp(path: Path, name: str, settings: GGUFSettings):
    """The GGUF file ``path`` computed by llama.cpp as ``settings`` say."""
    from faithprobe.subjects.gguf.llamacpp import load_llamacpp

    return load_llamacpp(
        path,
        name=name,
        n_ctx=settings.max_length,
        n_threads=settings.threads,
        n_gpu_layers=settings.gpu_layers(),
    )
