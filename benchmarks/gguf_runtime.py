"""GGUF models at the cost of their file? Today's dequantised path against llama.cpp.

    python benchmarks/gguf_runtime.py [--model embedded --model embedded:gemma3-270m]
        [--runtimes float32,bfloat16,llama.cpp] [--max-requests 120] [--threads 2]
        [--repeats 3] [--synthetic 7b,13b --scratch DIR] [--json OUT.json]

1. **The card's items, side by side.** The small audit's requests (:mod:`audit_requests`) of
   the candidate-scoring steps (``distractors``, ``natural-logic``, ``confidence-shift``; at
   most ``--max-requests`` each) and of ``faithfulness-deletion`` (generation) are planned
   once and answered by each runtime in a process of its own, with no answer cache and the
   same thread count: the dequantised float32 copy under
   :class:`~faithprobe.subjects.hf.causal.HFCausal` (today's path), the same copy loaded in
   bfloat16 (``dtype=bfloat16``), and the GGUF file under llama.cpp
   (:mod:`faithprobe.subjects.gguf.llamacpp`). Per runtime: requests per second (the best of
   ``--repeats`` runs, each after one untimed request), the ratio to float32 in the same
   run, the process's peak resident memory (its high-water mark, and the part that is not
   the interpreter and imports), and agreement with float32 (the same best candidate, the
   largest and median |difference of log-probability|; generation: identical replies). The
   load average is recorded before every process.
2. **First use and transformers' own quantised loading.** Today's path dequantises the file
   once: the conversion's seconds and peak memory. ``GgufConfig(dequantize=False)`` keeps
   GGUF blocks packed only for the architectures its new loader knows and only with a matmul
   kernel fetched from the Hugging Face Hub; the check records, per model, whether the
   loaded model holds any packed layer (else it was dequantised like today's path).
3. **The largest GGUF in 24 GiB** (``--synthetic``). A Llama-shaped GGUF of random Q4_K
   blocks (7B: Llama 2 7B's shape; 13B: Llama 2 13B's) with SmolLM2's tokenizer is written
   to ``--scratch`` (and deleted after), loaded by llama.cpp with a 4,096-token context, asked
   one scoring request, a 256-token prompt and 16 generated tokens: peak memory, load
   seconds, tokens per second. The dequantised path's memory for the same shape follows from
   its bytes per parameter measured in 1; its speed, from a transformers Llama of that shape
   with one and with two decoder layers (:func:`shape_worker`).

Prints a table; ``--json`` keeps every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCORING_STEPS = ("distractors", "natural-logic", "confidence-shift")
GENERATION_STEP = "faithfulness-deletion"
RUNTIMES = ("float32", "bfloat16", "llama.cpp")
GIB = 2**30
# Llama shapes: (layers, width, feed-forward width, heads, key/value heads)
SHAPES = {"7b": (32, 4096, 11008, 32, 32), "13b": (40, 5120, 13824, 40, 40)}
PROMPT_TOKENS, NEW_TOKENS = 256, 16  # the synthetic model's prompt and generation
SYNTHETIC_VOCAB = 49152  # SmolLM2's tokenizer, which the synthetic GGUFs carry


def _rss_peak() -> int:
    """This process's resident-memory high-water mark, in bytes (Linux: ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _rss_now() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# -- one runtime, in a process of its own ------------------------------------------------


def load(runtime: str, spec: str, threads: int):
    """The subject ``runtime`` runs model ``spec`` (an embedded model) as."""
    from faithprobe.subjects.gguf.embedded import embedded_model, gguf_path

    if runtime == "llama.cpp":
        from faithprobe.subjects.gguf.llamacpp import load_llamacpp

        path = gguf_path(embedded_model(spec))
        return load_llamacpp(path, name=spec, n_threads=threads)
    import torch

    from faithprobe.subjects import load_subject

    torch.set_num_threads(threads)
    return load_subject(f"{spec},dtype={runtime}")


def worker(runtime: str, spec: str, plan: Path, out: Path, threads: int, repeats: int) -> None:
    """Answer the planned requests under ``runtime``; write answers, seconds and memory."""
    by_step = pickle.loads(plan.read_bytes())
    baseline = _rss_now()  # the interpreter and faithprobe's light modules
    if runtime == "llama.cpp":
        import llama_cpp  # noqa: F401
    else:
        import faithprobe.subjects.hf.causal  # noqa: F401 -- torch, transformers
    imported = _rss_now()
    clock = time.perf_counter()
    subject = load(runtime, spec, threads)
    loaded = time.perf_counter() - clock
    after_load = _rss_now()
    steps = {}
    for step, requests in by_step.items():
        subject.answer(requests[:1])  # untimed: first-call costs (packing probe, kernels)
        times = []
        for _ in range(repeats):
            if hasattr(subject, "prefixes"):  # HFCausal keeps prompts' beginnings across calls:
                subject.prefixes.clear()  # each repeat reads its prompts afresh
            clock = time.perf_counter()
            answers = subject.answer(requests)
            times.append(time.perf_counter() - clock)
        steps[step] = {"seconds": times, "answers": answers}
    result = {
        "runtime": runtime,
        "model": spec,
        "fingerprint": subject.fingerprint,
        "load_seconds": loaded,
        "rss_baseline": baseline,
        "rss_after_imports": imported,
        "rss_after_load": after_load,
        "rss_peak": _rss_peak(),
        "steps": steps,
    }
    out.write_bytes(pickle.dumps(result))


def run_worker(runtime: str, spec: str, plan: Path, threads: int, repeats: int) -> dict:
    """:func:`worker` in a fresh interpreter; its result with the load average before it."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.pickle"
        load_before = os.getloadavg()
        command = [sys.executable, __file__, "--worker", runtime, "--model", spec,
                   "--plan", str(plan), "--out", str(out), "--threads", str(threads),
                   "--repeats", str(repeats)]  # fmt: skip
        subprocess.run(command, check=True)
        result = pickle.loads(out.read_bytes())
    result["loadavg_before"] = load_before
    result["loadavg_after"] = os.getloadavg()
    return result


# -- planning and comparing ---------------------------------------------------------------


def plan_requests(spec: str, max_requests: int, data_dir: Path | None) -> dict[str, list]:
    """Step -> the small audit's requests to model ``spec`` (at most ``max_requests``),
    planned with the llama.cpp subject (light; the same chat template as the copy's)."""
    from audit_requests import step_requests

    subject = load("llama.cpp", spec, 1)
    found = step_requests(subject, "small", data_dir, steps=[*SCORING_STEPS, GENERATION_STEP])
    return {step: requests[:max_requests] for step, requests in found.items()}


def figures(result: dict, reference: dict | None) -> dict:
    """Per step: requests per second (best run) and agreement with ``reference``'s answers."""
    from gpu_check import compare  # the GPU check's measures: the same best candidate, |Δ|

    rows = {}
    for step, done in result["steps"].items():
        row = {"requests": len(done["answers"]), "seconds": done["seconds"]}
        row["requests_per_second"] = len(done["answers"]) / min(done["seconds"])
        if reference is not None:
            row |= compare(reference["steps"][step]["answers"], done["answers"])
            theirs = reference["steps"][step]["answers"]
            row["same_token_counts"] = sum(
                a.n_tokens == b.n_tokens for a, b in zip(theirs, done["answers"], strict=True)
            ) / len(theirs)
        rows[step] = row
    return rows


def model_figures(spec: str, runtimes: list[str], by_step: dict, plan: Path, args) -> dict:
    results = {runtime: run_worker(runtime, spec, plan, args.threads, args.repeats)
               for runtime in runtimes}  # fmt: skip
    reference = results.get("float32")
    out = {}
    for runtime, result in results.items():
        rows = figures(result, reference if runtime != "float32" else None)
        out[runtime] = {
            "fingerprint": result["fingerprint"],
            "load_seconds": result["load_seconds"],
            "rss_peak_bytes": result["rss_peak"],
            "rss_imports_bytes": result["rss_after_imports"] - result["rss_baseline"],
            "rss_model_bytes": result["rss_peak"] - result["rss_after_imports"],
            "rss_after_load_bytes": result["rss_after_load"],
            "loadavg_before": result["loadavg_before"],
            "loadavg_after": result["loadavg_after"],
            "steps": rows,
        }
    if reference is not None:
        base = out["float32"]["steps"]
        for runtime in out:
            for step, row in out[runtime]["steps"].items():
                row["speed_vs_float32"] = (
                    row["requests_per_second"] / base[step]["requests_per_second"]
                )
    return out


def parameters(spec: str) -> int:
    """The model's parameter count, from its GGUF's tensor shapes."""
    import gguf

    from faithprobe.subjects.gguf.embedded import embedded_model, gguf_path

    reader = gguf.GGUFReader(str(gguf_path(embedded_model(spec))))
    return sum(int(t.n_elements) for t in reader.tensors)


def transformers_packed(spec: str) -> dict:
    """Does transformers keep this GGUF's blocks packed on the CPU (GgufConfig(dequantize=
    False))? Counts the packed layers of the model it loads."""
    code = f"""
import json, gguf
from transformers import AutoModelForCausalLM, GgufConfig
from transformers.integrations.gguf.utils import GgufLinear, is_gguf_arch_supported
from transformers.integrations.gguf.kernels import get_gguf_kernel
from faithprobe.subjects.gguf.embedded import embedded_model, gguf_path
path = gguf_path(embedded_model({spec!r}))
arch = str(bytes(gguf.GGUFReader(str(path)).fields["general.architecture"].parts[-1]), "utf-8")
model = AutoModelForCausalLM.from_pretrained(
    path.parent, gguf_file=path.name, quantization_config=GgufConfig(dequantize=False))
packed = sum(isinstance(m, GgufLinear) for m in model.modules())
print(json.dumps({{"architecture": arch, "packed_layers": packed,
    "architecture_on_packed_loader": is_gguf_arch_supported(arch),
    "matmul_kernel": bool(get_gguf_kernel()),
    "weights_dtype": str(next(model.parameters()).dtype)}}))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if done.returncode:
        return {"error": done.stderr.strip().splitlines()[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def conversion(spec: str) -> dict:
    """Today's first use of the file: its dequantisation to a float32 safetensors copy
    (:func:`~faithprobe.subjects.gguf.models.ensure_converted`, into a cache of its own), in a
    process of its own: seconds and peak memory."""
    code = f"""
import json, resource, tempfile, time
from pathlib import Path
from faithprobe.subjects.gguf.embedded import embedded_model, gguf_path
from faithprobe.subjects.gguf.models import ensure_converted
path = gguf_path(embedded_model({spec!r}))
with tempfile.TemporaryDirectory() as cache:
    clock = time.perf_counter()
    ensure_converted(path, cache_dir=Path(cache), log=lambda line: None)
    seconds = time.perf_counter() - clock
print(json.dumps({{"seconds": seconds,
    "rss_peak_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}}))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


# -- the largest GGUF in 24 GiB -------------------------------------------------------------


def write_synthetic(shape: str, path: Path) -> int:
    """A Llama GGUF of ``shape`` with random Q4_K blocks (norms float32 ones) and SmolLM2's
    tokenizer, written tensor by tensor; its parameter count."""
    import gguf
    import numpy as np

    from faithprobe.subjects.gguf.embedded import embedded_model, gguf_path

    layers, width, ffn, heads, kv_heads = SHAPES[shape]
    source = gguf.GGUFReader(str(gguf_path(embedded_model("embedded"))))
    tokens = [str(bytes(source.fields["tokenizer.ggml.tokens"].parts[i]), "utf-8")
              for i in source.fields["tokenizer.ggml.tokens"].data]  # fmt: skip
    merges = [str(bytes(source.fields["tokenizer.ggml.merges"].parts[i]), "utf-8")
              for i in source.fields["tokenizer.ggml.merges"].data]  # fmt: skip
    kinds = [int(source.fields["tokenizer.ggml.token_type"].parts[i][0])
             for i in source.fields["tokenizer.ggml.token_type"].data]  # fmt: skip
    vocab = len(tokens)
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name(f"synthetic-llama-{shape}")
    writer.add_context_length(4096)
    writer.add_embedding_length(width)
    writer.add_block_count(layers)
    writer.add_feed_forward_length(ffn)
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_dimension_count(width // heads)
    writer.add_vocab_size(vocab)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("smollm")
    writer.add_token_list(tokens)
    writer.add_token_types(kinds)
    writer.add_token_merges(merges)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_add_bos_token(False)
    kv = width * kv_heads // heads
    matrices = {"token_embd.weight": (vocab, width), "output.weight": (vocab, width)}
    norms = {"output_norm.weight": width}
    for i in range(layers):
        matrices |= {f"blk.{i}.attn_q.weight": (width, width), f"blk.{i}.attn_k.weight": (kv, width),
                     f"blk.{i}.attn_v.weight": (kv, width), f"blk.{i}.attn_output.weight": (width, width),
                     f"blk.{i}.ffn_gate.weight": (ffn, width), f"blk.{i}.ffn_up.weight": (ffn, width),
                     f"blk.{i}.ffn_down.weight": (width, ffn)}  # fmt: skip
        norms |= {f"blk.{i}.attn_norm.weight": width, f"blk.{i}.ffn_norm.weight": width}
    q4k = gguf.GGMLQuantizationType.Q4_K
    block, block_bytes = gguf.GGML_QUANT_SIZES[q4k]
    for name, (rows, cols) in matrices.items():
        nbytes = rows * cols // block * block_bytes
        writer.add_tensor_info(name, (rows, cols // block * block_bytes), np.dtype(np.uint8),
                               nbytes, raw_dtype=q4k)  # fmt: skip
    for name, n in norms.items():
        writer.add_tensor_info(name, (n,), np.dtype(np.float32), n * 4)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    rng = np.random.default_rng(0)
    # each block's d and dmin: weights d*scale*q - dmin*min of about zero mean, small enough
    # that 40 layers of random weights stay within float16 (llama.cpp's key/value cache)
    scale = np.array([1e-4, 7.5e-4], dtype=np.float16).view(np.uint8)
    for rows, cols in matrices.values():
        blocks = rng.integers(0, 256, (rows * cols // block, block_bytes), dtype=np.uint8)
        blocks[:, :4] = scale
        writer.write_tensor_data(blocks)
    for n in norms.values():
        writer.write_tensor_data(np.ones(n, dtype=np.float32))
    writer.close()
    return sum(r * c for r, c in matrices.values()) + sum(norms.values())


def synthetic_worker(path: Path, out: Path, threads: int) -> None:
    """Load the synthetic GGUF under llama.cpp (a 4,096-token context); one scoring request
    through the subject, then a 256-token prompt read and 16 tokens generated."""
    from faithprobe.requests import CandidateScoreRequest
    from faithprobe.subjects.gguf.llamacpp import load_llamacpp

    baseline = _rss_now()
    clock = time.perf_counter()
    subject = load_llamacpp(path, name=path.stem, n_threads=threads, n_ctx=4096)
    loaded = time.perf_counter() - clock
    after_load = _rss_now()
    score = CandidateScoreRequest(
        "Grace lives in Chile, and Henry lives in France. The capital of Grace's country is",
        ("Paris", "Santiago", "Beijing"),
    )
    clock = time.perf_counter()
    subject.answer([score])
    scored = time.perf_counter() - clock
    prompt = [100 + i for i in range(PROMPT_TOKENS)]
    clock = time.perf_counter()
    subject._run(prompt, 0, every=False)
    prefill = time.perf_counter() - clock
    clock = time.perf_counter()
    for i in range(NEW_TOKENS):
        subject._run([200 + i], PROMPT_TOKENS + i, every=False)
    decode = time.perf_counter() - clock
    figures = {
        "load_seconds": loaded,
        "rss_baseline": baseline,
        "rss_after_load": after_load,
        "rss_peak": _rss_peak(),
        "score_request_seconds": scored,
        "context_tokens": len(subject._encode(score)[0][0]),
        "prefill_tokens_per_second": PROMPT_TOKENS / prefill,
        "decode_tokens_per_second": NEW_TOKENS / decode,
    }
    out.write_text(json.dumps(figures))


def shape_worker(shape: str, dtype: str, out: Path, threads: int) -> None:
    """The dequantised path's speed at ``shape`` without its memory: a transformers Llama of
    that shape (random weights, in ``dtype``) with two decoder layers, then one, each timed on
    a 256-token prompt and 16 decoding steps over the key/value cache; a whole model's time
    is the one-layer time plus a layer's time for each further layer."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.set_num_threads(threads)
    layers, width, ffn, heads, kv_heads = SHAPES[shape]
    config = LlamaConfig(vocab_size=SYNTHETIC_VOCAB, hidden_size=width, intermediate_size=ffn,
                         num_hidden_layers=2, num_attention_heads=heads,
                         num_key_value_heads=kv_heads, max_position_embeddings=4096)  # fmt: skip
    model = LlamaForCausalLM(config).to(getattr(torch, dtype)).eval()
    timed = {}
    for n in (2, 1):
        model.model.layers = model.model.layers[:n]
        model.config.num_hidden_layers = n
        prompt = torch.arange(100, 100 + PROMPT_TOKENS)[None]
        with torch.inference_mode():
            clock = time.perf_counter()
            cache = model(prompt, use_cache=True, logits_to_keep=1).past_key_values
            prefill = time.perf_counter() - clock
            clock = time.perf_counter()
            for i in range(NEW_TOKENS):
                step = torch.tensor([[200 + i]])
                cache = model(step, past_key_values=cache, use_cache=True).past_key_values
            decode = time.perf_counter() - clock
        timed[n] = (prefill, decode)
    whole = [timed[1][k] + (layers - 1) * (timed[2][k] - timed[1][k]) for k in (0, 1)]
    out.write_text(json.dumps({"prefill_tokens_per_second": PROMPT_TOKENS / whole[0],
                               "decode_tokens_per_second": NEW_TOKENS / whole[1]}))  # fmt: skip


def synthetic_figures(shape: str, scratch: Path, threads: int) -> dict:
    """The synthetic GGUF of ``shape`` under llama.cpp (:func:`synthetic_worker`), then the
    dequantised path's speed at that shape in float32 and bfloat16 (:func:`shape_worker`)
    and its weights' size; each in a process of its own."""
    path, out = scratch / f"synthetic-{shape}-q4_k.gguf", scratch / f"synthetic-{shape}.json"
    try:
        clock = time.perf_counter()
        n_params = write_synthetic(shape, path)
        result = {"parameters": n_params, "file_bytes": path.stat().st_size,
                  "write_seconds": time.perf_counter() - clock,
                  "loadavg_before": os.getloadavg()}  # fmt: skip
        subprocess.run([sys.executable, __file__, "--synthetic-worker", str(path), "--out",
                        str(out), "--threads", str(threads)], check=True)  # fmt: skip
        result |= json.loads(out.read_text())
    finally:
        path.unlink(missing_ok=True)
    for dtype, size in (("float32", 4), ("bfloat16", 2)):
        subprocess.run([sys.executable, __file__, "--shape-worker", shape, "--dtype", dtype,
                        "--out", str(out), "--threads", str(threads)], check=True)  # fmt: skip
        result[f"dequantised_{dtype}"] = json.loads(out.read_text())
        result[f"dequantised_{dtype}"]["weights_bytes"] = n_params * size
    out.unlink()
    return result


# -- the report -------------------------------------------------------------------------------


def table(report: dict) -> str:
    lines = ["| model | runtime | step | req/s | x float32 | top-1 agree | max abs dlogp | "
             "median abs dlogp | identical replies | peak RSS GiB | RSS beyond imports GiB | "
             "load s |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for spec, runtimes in report["models"].items():
        for runtime, row in runtimes.items():
            for step, s in row["steps"].items():
                generation = step == GENERATION_STEP
                agree = s.get("agreement")
                lines.append(
                    f"| {spec} | {runtime} | {step} | {s['requests_per_second']:.2f} | "
                    f"{s.get('speed_vs_float32', 1):.2f} | "
                    f"{'' if generation or agree is None else f'{agree:.3f}'} | "
                    f"{_num(s.get('max_abs_delta'))} | {_num(s.get('median_abs_delta'))} | "
                    f"{f'{agree:.3f}' if generation and agree is not None else ''} | "
                    f"{row['rss_peak_bytes'] / GIB:.2f} | {row['rss_model_bytes'] / GIB:.2f} | "
                    f"{row['load_seconds']:.1f} |"
                )
    return "\n".join(lines)


def _num(value) -> str:
    return "" if value is None else f"{value:.3g}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", action="append", default=None)
    parser.add_argument("--runtimes", default=",".join(RUNTIMES), help="empty: models skipped")
    parser.add_argument("--max-requests", type=int, default=120)
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--synthetic", default="", help="shapes, e.g. 7b,13b")
    parser.add_argument("--scratch", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--synthetic-worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--shape-worker", help=argparse.SUPPRESS)
    parser.add_argument("--dtype", help=argparse.SUPPRESS)
    parser.add_argument("--plan", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.model[0], args.plan, args.out, args.threads, args.repeats)
        return 0
    if args.synthetic_worker:
        synthetic_worker(args.synthetic_worker, args.out, args.threads)
        return 0
    if args.shape_worker:
        shape_worker(args.shape_worker, args.dtype, args.out, args.threads)
        return 0
    from faithprobe.subjects.gguf.llamacpp import runtime_version

    report: dict = {
        "machine": {
            "cpu": platform.processor() or platform.machine(),
            "cores": os.cpu_count(),
            "threads": args.threads,
        },  # fmt: skip
        "llama_cpp_python": runtime_version(),
        "command": " ".join(sys.argv),
        "models": {},
        "parameters": {},
        "transformers_packed_gguf": {},
        "conversion": {},
        "synthetic": {},
    }
    runtimes = [r for r in args.runtimes.split(",") if r]
    with tempfile.TemporaryDirectory() as tmp:
        for spec in args.model or ["embedded"] if runtimes else []:
            by_step = plan_requests(spec, args.max_requests, args.data_dir)
            plan = Path(tmp) / "plan.pickle"
            plan.write_bytes(pickle.dumps(by_step))
            report["parameters"][spec] = parameters(spec)
            report["models"][spec] = model_figures(spec, runtimes, by_step, plan, args)
            report["transformers_packed_gguf"][spec] = transformers_packed(spec)
            report["conversion"][spec] = conversion(spec)
            print(table({"models": {spec: report["models"][spec]}}), flush=True)
    for shape in filter(None, args.synthetic.split(",")):
        report["synthetic"][shape] = synthetic_figures(shape, args.scratch, args.threads)
        print(shape, json.dumps(report["synthetic"][shape]), flush=True)
    print(table(report))
    print(
        json.dumps({k: report[k] for k in ("parameters", "transformers_packed_gguf", "conversion")})
    )
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=_jsonable))
    return 0


def _jsonable(value):
    """Answers and tuples as JSON (the figures hold no answers; fingerprints are strings)."""
    return value.__dict__ if hasattr(value, "__dict__") else str(value)


if __name__ == "__main__":
    sys.exit(main())
