"""The transformers backends' settings (device, dtype, device_map, attention, input bound,
revision, remote code): parsed and checked once, loaded as they say, and entering the
fingerprint only where they change answers -- every setting on the CPU, and the GPU cases
with a stand-in torch that plays the GPUs this machine lacks."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from faithprobe.errors import UsageError
from faithprobe.requests import CandidateScoreRequest, GenerationRequest
from faithprobe.subjects import load_subject, parse_model
from faithprobe.subjects.deferred import DeferredSubject
from faithprobe.subjects.gguf.settings import GGUFSettings
from faithprobe.subjects.hf.causal import HFCausal
from faithprobe.subjects.identity import HF_CAUSAL
from faithprobe.subjects.local_settings import HubSettings
from faithprobe.subjects.placement import Placement, placed, placement_parts, resolve

REQUESTS = [
    CandidateScoreRequest("Mary went to the garden and John went to the", ("garden", "kitchen")),
    CandidateScoreRequest("the cat sat on the", ("mat", "hat", "sofa in the hall")),
]


def _scores(subject) -> list[tuple[float, ...]]:
    return [a.logprobs for a in subject.answer(REQUESTS)]


# -- parsing and checking ---------------------------------------------------------------


def test_settings_are_parsed_from_the_spec_and_from_model_options(tiny_llama_dir):
    spec = parse_model(f"hf-causal:{tiny_llama_dir},dtype=bfloat16,max_length=64")
    assert spec.settings == HubSettings(dtype="bfloat16", max_length=64)
    spec = parse_model(str(tiny_llama_dir), {"device": "cpu", "attn_implementation": "eager"})
    assert (spec.backend, spec.settings.device, spec.settings.attn_implementation) == (
        "hf-causal",
        "cpu",
        "eager",
    )
    embedded = parse_model("embedded,dtype=float16").settings  # no revision: not a hub model
    assert type(embedded) is GGUFSettings and not hasattr(embedded, "revision")


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("device=gpu", "device='gpu': choose auto .*cuda:N or mps"),
        ("device=cuda:x", "device='cuda:x': choose"),
        ("dtype=float8", "dtype=.*choose from 'auto', 'float32', 'bfloat16', 'float16'"),
        ("device_map=everywhere", "device_map=.*choose from 'auto'"),
        ("attn_implementation=fast", "attn_implementation=.*choose from 'eager'"),
        ("max_length=2", "option max_length=2: expected a number from 8 to 10000000"),
        ("device=cpu,device_map=auto", "device_map=auto .*not device=cpu"),
        ("device=cuda", "device=cuda: no CUDA GPU is visible"),
        ("device=cuda:1", "device=cuda:1: no CUDA GPU is visible"),
        ("device=mps", "device=mps: this machine has no Apple GPU"),
    ],
)
def test_a_setting_this_machine_cannot_honour_is_refused_at_parse(tiny_llama_dir, setting, message):
    if torch.cuda.is_available() and "cuda" in setting:
        pytest.skip("this machine has CUDA")
    with pytest.raises(UsageError, match=message):
        parse_model(f"{tiny_llama_dir},{setting}")


@pytest.mark.parametrize(
    ("kernel", "module", "package"),
    [("flash_attention_2", "flash_attn", "flash-attn"),
     ("flash_attention_3", "flash_attn_interface", "flash-attn-3")],
)  # fmt: skip
def test_an_attention_kernel_whose_package_is_missing_is_refused_before_loading(
    tiny_llama_dir, monkeypatch, kernel, module, package
):
    """Refused at parse, as runtime=llama.cpp without its extra is: transformers would say
    so only after the weights have loaded."""
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == module
                        else find_spec(name, *a))  # fmt: skip
    for text in (
        f"{tiny_llama_dir},attn_implementation={kernel}",
        f"embedded,attn_implementation={kernel}",
    ):
        with pytest.raises(
            UsageError, match=f"attn_implementation={kernel} needs the {package} package"
        ):
            parse_model(text)
    parse_model(f"{tiny_llama_dir},attn_implementation=sdpa")  # in torch: taken


def test_cuda_without_cuda_is_one_line_and_exit_2_before_any_data_is_read(tmp_path):
    """The whole command: refused before the data file (which does not exist) is read."""
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    from typer.testing import CliRunner

    from faithprobe.cli import app

    out = tmp_path / "out"
    args = ["run", "confidence-shift", "--data", str(tmp_path / "absent.jsonl"),
            "--model", "embedded", "--model-option", "device=cuda", "--out", str(out)]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "device=cuda: no CUDA GPU is visible" in lines[0]
    assert not out.exists()


# -- devices and dtypes, resolved (a stand-in torch plays the GPUs) ---------------------


def _torch(*, cuda=0, bf16=True, mps=False, capability=(7, 0)):
    """A stand-in for torch with ``cuda`` GPUs (computing in bfloat16 natively or not)."""

    class Device:
        def __init__(self, *_):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *_):
            return False

    def ones(*_, device=None, **__):
        if not bf16:
            raise RuntimeError("bfloat16 not supported")

    return SimpleNamespace(
        __version__="0.test",
        version=SimpleNamespace(cuda="12.4" if cuda else None),
        device=lambda d: d,
        bfloat16="bf16",
        ones=ones,
        cuda=SimpleNamespace(
            is_available=lambda: cuda > 0,
            device_count=lambda: cuda,
            device=Device,
            is_bf16_supported=lambda including_emulation=True: bf16,
            get_device_capability=lambda d: capability,
            get_device_name=lambda d: "Tesla V100",
        ),
        backends=SimpleNamespace(mps=SimpleNamespace(is_available=lambda: mps)),
    )


@pytest.fixture
def maybe_accelerator(monkeypatch):
    """Make the cheap look at the machine say an accelerator may be here."""
    monkeypatch.setattr("faithprobe.subjects.placement.accelerator_possible", lambda: True)


def test_auto_takes_the_first_gpu_in_bfloat16_where_it_computes_in_it(maybe_accelerator):
    assert placed("auto", "auto", lambda: _torch(cuda=2)) == Placement("cuda", "bfloat16")
    assert placed("auto", "auto", lambda: _torch(cuda=1, bf16=False)) == Placement(
        "cuda", "float16"
    )
    assert placed("auto", "auto", lambda: _torch(mps=True)) == Placement("mps", "bfloat16")
    assert placed("auto", "auto", lambda: _torch()) == Placement("cpu", "float32")
    assert placed("cuda:1", "float32", lambda: _torch(cuda=2)) == Placement("cuda:1", "float32")


def test_a_gpu_that_is_not_there_or_lacks_the_dtype_is_refused(maybe_accelerator):
    with pytest.raises(UsageError, match=r"device=cuda:2: this machine shows 2 CUDA GPU"):
        placed("cuda:2", "auto", lambda: _torch(cuda=2))
    with pytest.raises(
        UsageError,
        match=r"dtype=bfloat16: Tesla V100 \(compute capability 7.0\) does not compute in "
        r"bfloat16; use dtype=float16",
    ):
        placed("cuda", "bfloat16", lambda: _torch(cuda=1, bf16=False))


def test_on_a_machine_without_accelerators_torch_is_not_even_asked(monkeypatch):
    monkeypatch.setattr("faithprobe.subjects.placement.accelerator_possible", lambda: False)

    def no_torch():
        raise AssertionError("torch was imported")

    assert placed("auto", "auto", no_torch) == Placement("cpu", "float32")
    assert placed("cpu", "bfloat16", no_torch) == Placement("cpu", "bfloat16")


def test_what_enters_the_fingerprint():
    assert placement_parts("cpu", "float32") == ()
    assert placement_parts("cpu", "bfloat16") == ("dtype=bfloat16",)
    assert placement_parts("cuda", "float32") == ("device=cuda",)
    assert placement_parts("cuda", "bfloat16") == ("device=cuda", "dtype=bfloat16")
    # the defaults on this CPU add nothing: every cache made before these settings holds
    if resolve().kind == "cpu":
        assert HubSettings().fingerprint_parts() == ()
        assert HubSettings(dtype="float32", device_map="auto").fingerprint_parts() == ()
        assert HubSettings(revision="main", trust_remote_code=True).fingerprint_parts() == ()
    assert HubSettings(dtype="bfloat16", attn_implementation="eager", max_length=64,
                       device="cpu").fingerprint_parts() == (
        "dtype=bfloat16", "attn=eager", "max_length=64")  # fmt: skip


# -- loading under the settings, on the CPU ---------------------------------------------


def test_the_cpu_float32_fingerprint_is_the_one_made_before_settings(tiny_llama_dir):
    """A CPU float32 run keys its answers as every earlier run did: deferred (from the
    files) and loaded, at the defaults and spelled out."""
    before = HF_CAUSAL.fingerprint(tiny_llama_dir)  # the formula of every earlier version
    for text in (str(tiny_llama_dir), f"{tiny_llama_dir},device=cpu,dtype=float32",
                 f"{tiny_llama_dir},device_map=auto", f"{tiny_llama_dir},dtype=auto"):  # fmt: skip
        deferred = load_subject(text, defer=True)
        assert isinstance(deferred, DeferredSubject)
        assert deferred.fingerprint == before
        assert deferred.subject.fingerprint == before  # the loaded model agrees


def test_bfloat16_loads_in_bfloat16_answers_close_and_is_keyed_apart(tiny_llama_dir):
    f32 = load_subject(str(tiny_llama_dir))
    bf16 = load_subject(f"{tiny_llama_dir},dtype=bfloat16", defer=True)
    assert bf16.fingerprint != f32.fingerprint
    got, want = _scores(bf16), _scores(f32)  # the deferred one loads: fingerprints agree
    assert bf16.subject.model.dtype == torch.bfloat16
    for a, b in zip(got, want, strict=True):
        assert a == pytest.approx(b, abs=0.25)  # bfloat16 keeps 8 bits of mantissa
    # generation runs in bfloat16 too
    (gen,) = bf16.answer([GenerationRequest("Mary went to the", 5)])
    assert gen.n_tokens > 0


def test_device_map_auto_on_the_cpu_places_every_layer_there(tiny_llama_dir):
    mapped = load_subject(f"{tiny_llama_dir},device_map=auto")
    plain = load_subject(str(tiny_llama_dir))
    # accelerate found no GPU: every layer on the CPU (transformers then keeps no map)
    assert {p.device.type for p in mapped.model.parameters()} == {"cpu"}
    assert set(getattr(mapped.model, "hf_device_map", {"": "cpu"}).values()) == {"cpu"}
    assert mapped.device.type == "cpu" and mapped.fingerprint == plain.fingerprint
    for a, b in zip(_scores(mapped), _scores(plain), strict=True):
        assert a == pytest.approx(b, abs=1e-5)


def test_attention_kernel_and_input_bound_are_used_and_keyed(tiny_llama_dir):
    plain = load_subject(str(tiny_llama_dir))
    eager = load_subject(f"{tiny_llama_dir},attn_implementation=eager")
    assert eager.model.config._attn_implementation == "eager"
    assert eager.fingerprint != plain.fingerprint
    for a, b in zip(_scores(eager), _scores(plain), strict=True):
        assert a == pytest.approx(b, abs=1e-4)
    short = load_subject(f"{tiny_llama_dir},max_length=32")
    assert (plain.max_length, short.max_length) == (256, 32)
    assert short.fingerprint != plain.fingerprint
    long_context = " ".join(["Mary went to the garden."] * 10)
    (cut,) = short.answer([CandidateScoreRequest(long_context, ("garden",))])
    (whole,) = plain.answer([CandidateScoreRequest(long_context, ("garden",))])
    assert cut.truncated and not whole.truncated


def test_a_hub_id_loads_from_the_hub_cache_at_its_revision(tiny_llama_dir, tmp_path, monkeypatch):
    """A Hugging Face id, offline, from a hub cache laid out as huggingface_hub lays it out:
    its revision is passed on, and off the CPU-float32 defaults its fingerprint is read
    from the snapshot's files (never from every tensor)."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--faithprobe--tiny-llama"
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    for f in tiny_llama_dir.iterdir():
        (snapshot / f.name).write_bytes(f.read_bytes())
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)

    default = load_subject("faithprobe/tiny-llama,revision=main")
    local = load_subject(str(tiny_llama_dir))
    # at the CPU-float32 defaults a hub id is keyed as always, by its tensors
    in_memory = HFCausal(local.model, local.tokenizer, name="same weights")
    assert default.fingerprint == in_memory.fingerprint
    for a, b in zip(_scores(default), _scores(local), strict=True):
        assert a == pytest.approx(b, abs=1e-6)
    bf16 = load_subject("faithprobe/tiny-llama,dtype=bfloat16")
    assert bf16.fingerprint == HF_CAUSAL.fingerprint(snapshot, ("dtype=bfloat16",))


def test_trust_remote_code_is_passed_on_and_keeps_a_folder_from_being_deferred(
    tiny_llama_dir, monkeypatch
):
    seen = []
    real = HFCausal.from_pretrained.__func__

    def spy(cls, path, **kwargs):
        seen.append(kwargs["settings"].trust_remote_code)
        return real(cls, path, **kwargs)

    monkeypatch.setattr(HFCausal, "from_pretrained", classmethod(spy))
    subject = load_subject(f"{tiny_llama_dir},trust_remote_code=true", defer=True)
    assert not isinstance(subject, DeferredSubject) and seen == [True]


# -- settings reach every transformers backend ------------------------------------------


def test_the_embedded_model_takes_the_settings():
    """``embedded,dtype=bfloat16``: keyed apart from the float32 default before loading."""
    from faithprobe.subjects.gguf.embedded import MODELS

    if not MODELS["embedded"].installed:
        pytest.skip("the embedded model is not installed")
    from faithprobe.subjects.gguf.embedded import converted

    f32 = load_subject("embedded", defer=True)
    bf16 = load_subject("embedded,dtype=bfloat16", defer=True)
    assert isinstance(bf16, DeferredSubject) and bf16.fingerprint != f32.fingerprint
    assert f32.fingerprint == HF_CAUSAL.fingerprint(converted())
    assert bf16.fingerprint == HF_CAUSAL.fingerprint(converted(), ("dtype=bfloat16",))
