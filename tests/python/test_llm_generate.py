"""Greedy generation with samples/llm/llama_decode.py: the decode step exported once, its KV caches kept as program
states. gpuu picks PyTorch's tokens (and its logits at every step agree) for a 5-token prompt and 64 new tokens,
under vulkan_first (every cache updated in place) and vgf_first; reset_state starts a second generation from a
clean cache; two sessions of one program, stepped in turn on different prompts, keep their own caches; a half model
keeps half caches and follows PyTorch's half model."""

import copy
import importlib.util
import os
import subprocess

import numpy as np
import pytest

import gpuu

_path = os.path.join(os.path.dirname(__file__), "..", "..", "samples", "llm", "llama_decode.py")
_spec = importlib.util.spec_from_file_location("llama_decode", _path)
llama = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(llama)

PROMPT = [1, 2, 3, 4, 5]
OTHER_PROMPT = [200, 17, 99, 3, 42]
NEW_TOKENS = 64


def recording(step, logits):
    """`step`, appending each step's logits to `logits`."""
    def recorded(token, position):
        out = step(token, position)
        logits.append(np.array(out))
        return out
    return recorded


@pytest.fixture(scope="module")
def model():
    return llama.LlamaDecoder()


@pytest.fixture(scope="module")
def reference(model):
    """PyTorch's tokens and per-step logits for PROMPT, and its caches after them."""
    m = copy.deepcopy(model)
    logits = []
    tokens = llama.generate(recording(llama.torch_step(m), logits), PROMPT, NEW_TOKENS)
    caches = {name: b.numpy().copy() for name, b in m.named_buffers() if name.endswith("_cache")}
    return tokens, logits, caches


@pytest.fixture(scope="module")
def vulkan_first(model, tmp_path_factory):
    path = tmp_path_factory.mktemp("llm") / "llama_vulkan_first.gpuu"
    report = llama.export(model, path, "vulkan_first")
    assert [s["name"] for s in report["states"]] == model.cache_names()
    return path


def generate_and_compare(program, reference):
    want_tokens, want_logits, want_caches = reference
    logits = []
    tokens = llama.generate(recording(llama.gpuu_step(program), logits), PROMPT, NEW_TOKENS)
    assert tokens == want_tokens
    assert len(logits) == len(want_logits) == len(PROMPT) + NEW_TOKENS - 1
    for step, (got, want) in enumerate(zip(logits, want_logits)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=f"logits of step {step}")
    for name, want in want_caches.items():
        np.testing.assert_allclose(program.state(name), want, rtol=1e-5, atol=1e-5, err_msg=f"state {name!r}")


def test_vulkan_first_generates_pytorchs_tokens_with_the_caches_in_place(model, reference, vulkan_first):
    with gpuu.load(vulkan_first) as program:
        assert program.state_names == model.cache_names()
        for name in program.state_names:
            assert program.session.state_in_place(name), f"{name} is updated through a copy"
        generate_and_compare(program, reference)
        assert program.last_execute_stats().host_copies == 0, "a state went through the host"
        # A second generation from cleared caches (the mask hides the first one's entries past each position, so
        # the tokens repeat only if reset_state left the program runnable and every step writes its own entry).
        program.reset_state()
        for name in program.state_names:
            assert not program.state(name).any(), f"{name} is not cleared"
        generate_and_compare(program, reference)


def test_two_sessions_stepped_in_turn_keep_their_own_caches(model, vulkan_first):
    prompts = [PROMPT, OTHER_PROMPT]
    torch_steps = [llama.torch_step(copy.deepcopy(model)) for _ in prompts]
    with gpuu.load(vulkan_first) as a, gpuu.load(vulkan_first) as b:
        gpuu_steps = [llama.gpuu_step(a), llama.gpuu_step(b)]
        logits = [None, None]
        tokens = [[], []]
        # The two generations advance one step each in turn, so every step of one runs between two of the other.
        for position in range(len(PROMPT) + NEW_TOKENS - 1):
            for i, prompt in enumerate(prompts):
                if position < len(prompt):
                    token = prompt[position]
                else:
                    token = int(np.argmax(logits[i][0]))
                    tokens[i].append(token)
                logits[i] = gpuu_steps[i](token, position)
                want = torch_steps[i](token, position)
                np.testing.assert_allclose(logits[i], want, rtol=1e-4, atol=1e-4,
                                           err_msg=f"session {i}, step {position}")
                assert np.argmax(logits[i][0]) == np.argmax(want[0]), f"session {i}, step {position}"
        assert tokens[0] != tokens[1], "the prompts lead to different tokens"


def test_vgf_first_generates_pytorchs_tokens(model, reference, tmp_path):
    report = llama.export(model, tmp_path / "llama_vgf_first.gpuu", "vgf_first")
    assert "VgfBackend" in {r["backend"] for r in report["regions"]}
    with gpuu.load(tmp_path / "llama_vgf_first.gpuu") as program:
        generate_and_compare(program, reference)


def test_the_c_sample_generates_the_same_tokens(reference, vulkan_first):
    """samples/llm/generate.c, built beside the gpuu package's build tree, over the same program and prompt."""
    package = os.path.dirname(os.path.abspath(gpuu.__file__))
    binary = os.path.join(package, "..", "..", "..", "samples", "llm", "gpuu_llm_generate")
    assert os.path.isfile(binary), f"the C sample is not built: no {binary}"
    out = subprocess.run([binary, str(vulkan_first), str(NEW_TOKENS), *map(str, PROMPT)], capture_output=True,
                         text=True, timeout=240)
    assert out.returncode == 0, out.stderr
    assert [int(t) for t in out.stdout.split()] == reference[0]


def test_a_half_model_keeps_half_caches_and_follows_pytorch(tmp_path):
    """model.half() exports as it is: its caches are f16 states, and each step's logits follow PyTorch's half
    model fed the same tokens (PyTorch's greedy ones: a near tie may pick differently in f16, so tokens are not
    compared)."""
    model = llama.LlamaDecoder().half()
    want_tokens = llama.generate(llama.torch_step(copy.deepcopy(model)), PROMPT, 16)
    llama.export(model, tmp_path / "llama_f16.gpuu", "vulkan_first")
    torch_step = llama.torch_step(copy.deepcopy(model))
    with gpuu.load(tmp_path / "llama_f16.gpuu") as program:
        for name in program.state_names:
            assert program.state(name).dtype == np.float16, name
            assert program.session.state_in_place(name), f"{name} is updated through a copy"
        step = llama.gpuu_step(program)
        for position, token in enumerate(PROMPT + want_tokens[:-1]):
            got, want = step(token, position), torch_step(token, position)
            assert got.dtype == np.float16
            # The logits reach about 2.5, where one f16 step is 2e-3.
            np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=0, atol=1e-2,
                                       err_msg=f"logits of step {position}")
