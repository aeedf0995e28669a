"""Greedy generation with samples/llm/llama_decode.py: one step exported once with a dynamic seq dim, its KV caches
kept as program states. The 5-token prompt goes in one step (the session runs at seq 5), then 64 new tokens one a
step (seq 1): gpuu picks PyTorch's tokens (and its logits at every step agree), under vulkan_first (every cache
updated in place) and vgf_first, from Python and from the C sample; reset_state starts a second generation from a
clean cache; two sessions of one program, stepped in turn on different prompts, keep their own caches and sizes;
the prompt in one step and one token per step leave the same caches and pick the same next token; a half model
keeps half caches and follows PyTorch's half model."""

import copy
import os
import subprocess

import numpy as np
import pytest

import gpuu
from llama_sample import llama


PROMPT = [1, 2, 3, 4, 5]
OTHER_PROMPT = [200, 17, 99, 3, 42]
NEW_TOKENS = 64


def recording(step, logits, seqs=None, program=None):
    """`step`, appending each step's logits to `logits` (and, given a program, the seq it ran at to `seqs`)."""
    def recorded(tokens, start):
        out = step(tokens, start)
        logits.append(np.array(out))
        if program is not None:
            seqs.append(program.dims["seq"])
        return out
    return recorded


def caches(model):
    return {name: model.get_buffer(name).numpy().copy() for name in model.cache_names()}


@pytest.fixture(scope="module")
def model():
    return llama.LlamaDecoder()


@pytest.fixture(scope="module")
def reference(model):
    """PyTorch's tokens and per-step logits for PROMPT, and its caches after them."""
    m = copy.deepcopy(model)
    logits = []
    tokens = llama.generate(recording(llama.torch_step(m), logits), PROMPT, NEW_TOKENS)
    return tokens, logits, caches(m)


@pytest.fixture(scope="module")
def vulkan_first(model, tmp_path_factory):
    path = tmp_path_factory.mktemp("llm") / "llama_vulkan_first.gpuu"
    report = llama.export(model, path, "vulkan_first", example_length=len(PROMPT))
    assert [s["name"] for s in report["states"]] == model.cache_names()
    # Recorded at the prompt's length (where a session starts), runs at 1 to max_len.
    assert report["dims"] == [{"name": "seq", "min": 1, "max": model.cfg.max_len, "recorded_at": len(PROMPT)}]
    return path


def generate_and_compare(program, reference):
    want_tokens, want_logits, want_caches = reference
    logits, seqs = [], []
    tokens = llama.generate(recording(llama.gpuu_step(program), logits, seqs, program), PROMPT, NEW_TOKENS)
    assert tokens == want_tokens
    # One prefill step of the whole prompt, then one step per new token but the last.
    assert len(logits) == len(want_logits) == NEW_TOKENS
    assert seqs == [len(PROMPT)] + [1] * (NEW_TOKENS - 1)
    for step, (got, want) in enumerate(zip(logits, want_logits)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=f"logits of step {step}")
    for name, want in want_caches.items():
        np.testing.assert_allclose(program.state(name), want, rtol=1e-5, atol=1e-5, err_msg=f"state {name!r}")


def test_vulkan_first_generates_pytorchs_tokens_with_the_caches_in_place(model, reference, vulkan_first):
    with gpuu.load(vulkan_first) as program:
        assert program.state_names == model.cache_names()
        assert program.dims == {"seq": len(PROMPT)}  # a session starts at the sizes the program was recorded at
        for name in program.state_names:
            assert program.session.state_in_place(name), f"{name} is updated through a copy"
        generate_and_compare(program, reference)
        for name in program.state_names:  # the session specialized at seq 1 keeps them in place too
            assert program.session.state_in_place(name), f"{name} is updated through a copy at seq 1"
        assert program.last_execute_stats().host_copies == 0, "a state went through the host"
        # A second generation from cleared caches (the mask hides the first one's entries past each position, so
        # the tokens repeat only if reset_state left the program runnable and every step writes its own entry).
        program.reset_state()
        for name in program.state_names:
            assert not program.state(name).any(), f"{name} is not cleared"
        generate_and_compare(program, reference)


def test_two_sessions_stepped_in_turn_keep_their_own_caches(model, vulkan_first):
    prompts = [PROMPT, OTHER_PROMPT[:3]]  # prompts of different lengths: each session runs at its own seq
    torch_steps = [llama.torch_step(copy.deepcopy(model)) for _ in prompts]
    with gpuu.load(vulkan_first) as a, gpuu.load(vulkan_first) as b:
        programs = [a, b]
        gpuu_steps = [llama.gpuu_step(a), llama.gpuu_step(b)]
        logits = [None, None]
        tokens = [[], []]
        # The two generations advance one step each in turn, so every step of one runs between two of the other:
        # both prompts in one step each, then one new token each.
        for i, prompt in enumerate(prompts):
            logits[i] = gpuu_steps[i](prompt, 0)
            np.testing.assert_allclose(logits[i], torch_steps[i](prompt, 0), rtol=1e-4, atol=1e-4,
                                       err_msg=f"session {i}, prefill")
        assert [p.dims for p in programs] == [{"seq": len(prompts[0])}, {"seq": len(prompts[1])}]
        for step in range(NEW_TOKENS - 1):
            for i, prompt in enumerate(prompts):
                token = int(np.argmax(logits[i][0]))
                tokens[i].append(token)
                logits[i] = gpuu_steps[i]([token], len(prompt) + step)
                want = torch_steps[i]([token], len(prompt) + step)
                np.testing.assert_allclose(logits[i], want, rtol=1e-4, atol=1e-4,
                                           err_msg=f"session {i}, decode step {step}")
                assert np.argmax(logits[i][0]) == np.argmax(want[0]), f"session {i}, decode step {step}"
                assert programs[i].dims == {"seq": 1}
        assert tokens[0] != tokens[1], "the prompts lead to different tokens"


def test_prefill_in_one_step_and_token_by_token_agree(model, vulkan_first):
    """The prompt in one step (seq 5) and in five steps of one token (seq 1) write the same caches and pick the
    same next token, in gpuu and in PyTorch; the one-step caches are PyTorch's."""
    torch_model = copy.deepcopy(model)
    want = llama.torch_step(torch_model)(PROMPT, 0)
    with gpuu.load(vulkan_first) as program:
        step = llama.gpuu_step(program)
        one_step = step(PROMPT, 0)
        assert program.dims == {"seq": len(PROMPT)}
        one_step_caches = {name: np.array(program.state(name)) for name in program.state_names}
        program.reset_state()
        for position, token in enumerate(PROMPT):
            by_token = step([token], position)
        assert program.dims == {"seq": 1}
        np.testing.assert_allclose(one_step, want, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(by_token, one_step, rtol=1e-4, atol=1e-4)
        assert np.argmax(one_step[0]) == np.argmax(by_token[0]) == np.argmax(want[0])
        for name, want_cache in caches(torch_model).items():
            assert want_cache[:, :, :len(PROMPT)].any() and not want_cache[:, :, len(PROMPT):].any(), name
            np.testing.assert_allclose(one_step_caches[name], want_cache, rtol=1e-5, atol=1e-5, err_msg=name)
            np.testing.assert_allclose(program.state(name), one_step_caches[name], rtol=1e-5, atol=1e-5,
                                       err_msg=name)
        # generate()'s by_token prefill picks the one-step tokens.
        program.reset_state()
        tokens = llama.generate(step, PROMPT, 8)
        program.reset_state()
        assert llama.generate(step, PROMPT, 8, prefill="by_token") == tokens


def test_prefill_in_power_of_two_steps_meets_few_lengths(model, vulkan_first):
    """Prompts of 3 to 15 tokens prefilled in steps of powers of two (13: 8, 4, 1) pick the tokens of PyTorch's
    one-step prefill and of gpuu's, and a session meets only the lengths 1, 2, 4 and 8: after the first four
    prompts, four more of other lengths make no new specialization. max_shape_variants bounds what it holds."""
    assert llama.bucket_lengths(13) == [8, 4, 1] and llama.bucket_lengths(8) == [8]
    first, second = [5, 7, 3, 12], [6, 9, 11, 15]
    with gpuu.load(vulkan_first, max_shape_variants=8) as program:
        step = llama.gpuu_step(program)
        seqs = []

        def generated(prompt, prefill):
            program.reset_state()
            logits = []
            tokens = llama.generate(recording(step, logits, seqs, program), prompt, 4, prefill=prefill)
            return tokens
        for lengths in (first, second):
            for n in lengths:
                prompt = [(17 * i + n) % model.cfg.vocab for i in range(n)]
                want = llama.generate(llama.torch_step(copy.deepcopy(model)), prompt, 4)
                assert generated(prompt, "buckets") == want, f"{n} tokens in buckets"
                if n in (7, 15):
                    assert generated(prompt, "one_step") == want, f"{n} tokens in one step"
            if lengths is first:
                held = program.shape_variant_count
        assert set(seqs) == {1, 2, 4, 8, 7, 15}
        # The second prompts' lengths 6, 9, 11 in buckets and 15 in one step: only 15 is new.
        assert program.shape_variant_count == held + 1
        assert program.shape_variant_count <= 8
    with gpuu.load(vulkan_first, max_shape_variants=2) as program:
        assert llama.generate(llama.gpuu_step(program), first[3] * [1], 2, prefill="buckets")
        assert program.shape_variant_count <= 2
    with pytest.raises(TypeError, match="max_shape_variants"):
        gpuu.load(vulkan_first, max_shape_variants=-1)


def test_vgf_first_generates_pytorchs_tokens(model, reference, tmp_path):
    report = llama.export(model, tmp_path / "llama_vgf_first.gpuu", "vgf_first", example_length=len(PROMPT))
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
    llama.export(model, tmp_path / "llama_f16.gpuu", "vulkan_first", example_length=len(PROMPT))
    torch_step = llama.torch_step(copy.deepcopy(model))
    with gpuu.load(tmp_path / "llama_f16.gpuu") as program:
        for name in program.state_names:
            assert program.state(name).dtype == np.float16, name
            assert program.session.state_in_place(name), f"{name} is updated through a copy"
        step = llama.gpuu_step(program)
        # The prompt in one step, then PyTorch's tokens one a step.
        steps = [(PROMPT, 0)] + [([token], len(PROMPT) + i) for i, token in enumerate(want_tokens[:-1])]
        for tokens, start in steps:
            got, want = step(tokens, start), torch_step(tokens, start)
            assert program.dims == {"seq": len(tokens)}
            assert got.dtype == np.float16
            # The logits reach about 2.5, where one f16 step is 2e-3.
            np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=0, atol=1e-2,
                                       err_msg=f"logits of the step at {start}")
