#!/usr/bin/env python3
"""Prefill and decode tokens/s of the Llama-style decoder of samples/llm/llama_decode.py: gpuu (the step exported
with a dynamic seq dim, its KV caches kept as program states on the device) against PyTorch eager and, on CUDA,
CUDA-graph replay of the same step (one graph for the prefill's length, one for decode), for one model size in f32
and f16. The prompt goes in one step (a real prefill), then one token a step. Writes a JSON file and prints a
table.

  PYTHONPATH=build/bindings/python python3 benchmarks/llm/bench_decode.py --size tiny --out /tmp/llm-tiny.json

benchmarks/llm/README.md says what each number is and how run.sh runs it on the GPU machine.
"""

import argparse
import copy
import dataclasses
import datetime
import json
import os
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "suite"))
from torch_suite import graphed, median, sync  # noqa: E402  (the suite's timing helpers, one home)

RUNNERS = ("gpuu", "torch_eager", "torch_graph")
# How the prompt goes in (--prefill), as the table and the JSON say it.
PREFILL_METHODS = {
    "one_step": "the prompt in one step; tokens/s = prompt tokens / the median of --prefill-repeats such steps",
    "by_token": "the prompt one token per step (as decode steps); tokens/s = prompt tokens / their total time",
}


def sizes(LlamaConfig) -> Dict[str, Any]:
    """The model sizes by name (random weights; the lm head is not tied to the embedding)."""
    return {
        "tiny": LlamaConfig(),  # the sample's default, small enough for lavapipe
        "125m": LlamaConfig(vocab=32000, d_model=768, layers=12, heads=12, kv_heads=4, ffn_hidden=2048, max_len=512),
        "1b": LlamaConfig(vocab=128256, d_model=2048, layers=16, heads=32, kv_heads=8, ffn_hidden=8192, max_len=512,
                          rope_theta=500000.0),  # Llama-3.2-1B's shapes
    }


class TimedStep:
    """A step (tokens, start) -> the last token's logits, timed: each call's wall seconds in `wall_s`, and, where
    `gpu_us` is given, the GPU microseconds it reports after the call in `gpu_us_list`. `to_host` turns the
    step's logits into a numpy array after the timing (greedy argmax is outside the timed step); `best_two` keeps
    each call's two largest logits (a greedy token picked by a near tie is rounding's choice)."""

    def __init__(self, step: Callable[[List[int], int], Any], to_host: Callable[[Any], np.ndarray] = lambda x: x,
                 gpu_us: Optional[Callable[[], float]] = None):
        self.step, self.to_host, self.gpu_us = step, to_host, gpu_us
        self.wall_s: List[float] = []
        self.gpu_us_list: List[float] = []
        self.best_two: List[Tuple[float, float]] = []

    def __call__(self, tokens: List[int], start: int) -> np.ndarray:
        t0 = time.perf_counter()
        logits = self.step(tokens, start)
        self.wall_s.append(time.perf_counter() - t0)
        if self.gpu_us is not None:
            self.gpu_us_list.append(self.gpu_us())
        host = self.to_host(logits)
        last = np.asarray(host).reshape(-1, np.shape(host)[-1])[-1]
        second, first = np.partition(last, -2)[-2:]
        self.best_two.append((float(first), float(second)))
        return host

    def best_two_of(self, generated: int) -> List[List[float]]:
        """[best, second best] logits of the steps that picked the last `generated` tokens (a generation's
        last steps each pick one)."""
        return [[round(a, 6), round(b, 6)] for a, b in self.best_two[-generated:]] if generated else []


def percentile(values: List[float], q: float) -> float:
    v = sorted(values)
    return round(v[min(len(v) - 1, int(q * len(v)))], 2)


def phases(wall_s: List[float], prefill: str, prefill_steps: int, prompt_len: int, gpu_us: List[float] = (),
           execute_s: List[float] = ()) -> Dict[str, Any]:
    """Prefill (the first prefill_steps steps: the prompt's one step repeated, or one step per prompt token) and
    decode (the rest) of one timed generation."""
    prefill_us, decode_us = [t * 1e6 for t in wall_s[:prefill_steps]], [t * 1e6 for t in wall_s[prefill_steps:]]
    # One prefill's time: a step of the whole prompt (its median), or the prompt's steps together.
    prefill_ms = (median(prefill_us) if prefill == "one_step" else sum(prefill_us)) / 1e3
    out = {
        "prefill": {"method": prefill, "tokens": prompt_len, "steps": prefill_steps, "ms": round(prefill_ms, 3),
                    "tokens_per_s": round(prompt_len / prefill_ms * 1e3, 2), "step_us_median": median(prefill_us),
                    "step_us_max": round(max(prefill_us), 2)},
        "decode": {"steps": len(decode_us), "step_us_median": median(decode_us),
                   "step_us_p90": percentile(decode_us, 0.9), "tokens_per_s": round(1e6 / median(decode_us), 2)},
    }
    if gpu_us:
        out["prefill"]["gpu_us_median"] = median(gpu_us[:prefill_steps])
        out["decode"]["gpu_us_median"] = median(gpu_us[prefill_steps:])
    if execute_s:
        # The step less reading the logits back: set the inputs (and sizes) and execute.
        out["prefill"]["execute_us_median"] = median([t * 1e6 for t in execute_s[:prefill_steps]])
        out["decode"]["execute_us_median"] = median([t * 1e6 for t in execute_s[prefill_steps:]])
    return out


def warm_clock(dev: torch.device, seconds: float) -> None:
    """The GPU reaches its boost clock only after seconds of steady work (as the suite's benchmarks do)."""
    if dev.type != "cuda" or seconds <= 0:
        return
    w = torch.randn(2048, 2048, device=dev)
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        w @ w
        torch.cuda.synchronize()


class Bench:
    """The runners of one model size: gpuu and PyTorch, each timing one generation of the same prompt."""

    def __init__(self, llama, args, cfg, prompt: List[int], dev: torch.device):
        self.llama, self.args, self.cfg, self.prompt, self.dev = llama, args, cfg, prompt, dev

    @property
    def prefill_steps(self) -> int:
        """The steps of a timed generation that prefill."""
        return self.args.prefill_repeats if self.args.prefill == "one_step" else len(self.prompt)

    def warm_up(self, step: Callable[[List[int], int], Any]) -> None:
        """Untimed steps of each length the timed generation runs (gpuu makes its program at each length on
        first use): a prefill, then --warmup decode steps."""
        if self.args.prefill == "one_step":
            step(self.prompt, 0)
        for position in range(self.args.warmup):
            step([self.prompt[position % len(self.prompt)]], position)

    def generate(self, step: TimedStep) -> List[int]:
        # A prefill step writes every cache entry it reads, so running it again leaves the same caches and logits:
        # its repeats time it several times within one generation.
        if self.args.prefill == "one_step":
            for _ in range(self.args.prefill_repeats - 1):
                step(self.prompt, 0)
        # new_tokens = decode steps + 1: the prefill picks the first new token.
        return self.llama.generate(step, self.prompt, self.args.decode_steps + 1, self.args.prefill)

    def phases(self, timed: TimedStep, execute_s: List[float] = ()) -> Dict[str, Any]:
        return phases(timed.wall_s, self.args.prefill, self.prefill_steps, len(self.prompt), timed.gpu_us_list,
                      execute_s)

    # gpuu -------------------------------------------------------------------------------------------------------
    @property
    def example_length(self) -> int:
        """The length the step is recorded at, where a session starts: the prompt's (2 at least), so that loading
        makes the program for the prefill."""
        return max(2, len(self.prompt))

    def export(self, model, f32_model, precision: str, path: str) -> Dict[str, Any]:
        """The f16 program is the half model exported as it is; should that fail, the f32 model exported with
        precision="fp16" (f32 in and out, f16 inside), and the JSON says which."""
        t0 = time.perf_counter()
        info: Dict[str, Any] = {"how": "f32 model" if precision == "f32" else "half model (model.half())"
                                + (f", gpuu.quantize(scheme={precision[4:]!r})" if precision.startswith("f16-") else "")}
        try:
            report = self.llama.export(model, path, self.args.policy, example_length=self.example_length)
        except Exception as e:  # noqa: BLE001 (the fallback below, and the error in the JSON)
            if precision != "f16":  # the fallback is f16's own (a quantized model has no f32 form to take)
                raise
            info["half_model_error"] = f"{type(e).__name__}: {e}"
            info["how"] = 'f32 model, gpuu.export(..., precision="fp16")'
            log(f"gpuu f16: the half model does not export ({info['half_model_error']}); trying precision=fp16")
            t0 = time.perf_counter()
            report = self.llama.export(f32_model, path, self.args.policy, precision="fp16",
                                       example_length=self.example_length)
        info.update(export_s=round(time.perf_counter() - t0, 2), bytes=os.path.getsize(path),
                    backends={b: v for b, v in report["summary"]["backends"].items() if v["regions"]},
                    states=len(report["states"]))
        return info

    def gpuu_pass(self, path: str, gpu_timing: bool) -> Dict[str, Any]:
        import gpuu
        t0 = time.perf_counter()
        with gpuu.load(path, gpu_timing=gpu_timing) as program:
            load_s = time.perf_counter() - t0
            session, execute_s, switch_s = program.session, [], []

            def step(tokens: List[int], start: int) -> np.ndarray:
                t = time.perf_counter()
                arrays = self.llama.step_inputs(tokens, start)
                if session.inputs[0].shape != arrays[0].shape:  # to the program made at this length (kept)
                    session.set_input_shapes([a.shape for a in arrays])
                    switch_s.append(time.perf_counter() - t)
                session.set_input(0, arrays[0])
                session.set_input(1, arrays[1])
                session.execute()
                execute_s.append(time.perf_counter() - t)
                return session.get_output(0)

            warm_clock(self.dev, self.args.spin_s)
            self.warm_up(step)
            program.reset_state()
            execute_s.clear()
            switch_s.clear()
            timed = TimedStep(step, gpu_us=(lambda: program.last_execute_stats().gpu_time_us) if gpu_timing else None)
            tokens = self.generate(timed)
            out = {"load_s": round(load_s, 2), "tokens": tokens, "best_two": timed.best_two_of(len(tokens)),
                   **self.phases(timed, execute_s),
                   # Changing the step's length within a generation (prefill to decode, within the timed steps).
                   "length_switch_us": [round(t * 1e6, 1) for t in switch_s]}
            if not gpu_timing:
                out["vulkan_device"] = program.context().device_name
                out["states_in_place"] = all(session.state_in_place(n) for n in program.state_names)
                out["host_copies_per_step"] = program.last_execute_stats().host_copies
            return out

    def gpuu(self, model, f32_model, precision: str) -> Dict[str, Any]:
        path = os.path.join(self.args.work_dir, f"llama_{self.args.size}_{precision}.gpuu")
        out: Dict[str, Any] = {}
        try:
            out["export"] = self.export(model, f32_model, precision, path)
            log(f"gpuu {precision}: exported in {out['export']['export_s']} s ({out['export']['bytes']} bytes)")
            out["wall"] = self.gpuu_pass(path, gpu_timing=False)
            log(f"gpuu {precision}: wall pass done")
            out["gpu_timed"] = self.gpuu_pass(path, gpu_timing=True)
            log(f"gpuu {precision}: gpu_timing pass done")
        except Exception as e:  # noqa: BLE001 (one runner failing leaves the others' numbers)
            out["error"] = f"{type(e).__name__}: {e}"
            log(f"gpuu {precision}: {out['error']}")
        finally:
            if os.path.exists(path) and not self.args.keep_programs:
                os.remove(path)
        return out

    # PyTorch ----------------------------------------------------------------------------------------------------
    def zero_caches(self, model) -> None:
        for name in model.cache_names():
            model.get_buffer(name).zero_()

    def torch_pass(self, model, run: Callable[[List[int], int], Any], events: bool) -> Dict[str, Any]:
        """One timed generation of `run` (the model eager or a graph's replay, on static inputs) from clean caches;
        with `events`, each step's GPU time from CUDA events around it."""
        gpu_us: List[float] = []

        def step(tokens: List[int], start: int) -> torch.Tensor:
            if events:
                begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                begin.record()
                logits = run(tokens, start)
                end.record()
                end.synchronize()
                gpu_us.append(begin.elapsed_time(end) * 1e3)
            else:
                logits = run(tokens, start)
                sync(self.dev)
            return logits

        self.zero_caches(model)
        timed = TimedStep(step, to_host=lambda logits: logits.float().cpu().numpy(),
                          gpu_us=(lambda: gpu_us[-1]) if events else None)
        tokens = self.generate(timed)
        return {"tokens": tokens, "best_two": timed.best_two_of(len(tokens)), **self.phases(timed)}

    def torch_runner(self, model, graph: bool) -> Dict[str, Any]:
        # Static inputs per step length (decode's 1 and the prompt's): a CUDA graph reads them at fixed addresses.
        lengths = {1, len(self.prompt)} if self.args.prefill == "one_step" else {1}
        inputs = {n: (torch.zeros(1, n, dtype=torch.int64, device=self.dev),
                      torch.zeros(n, dtype=torch.int64, device=self.dev)) for n in lengths}
        if graph:  # the caches are buffers at fixed addresses: one capture per length serves every step of it
            graphs = {n: graphed(lambda n=n: model(*inputs[n])) for n in lengths}

        def run(tokens: List[int], start: int) -> torch.Tensor:
            tok, pos = inputs[len(tokens)]
            if len(tokens) == 1:
                tok.fill_(tokens[0])
                pos.fill_(start)
            else:
                tok.copy_(torch.tensor([tokens]))
                pos.copy_(torch.arange(start, start + len(tokens)))
            if not graph:
                return model(tok, pos)
            g, graph_logits = graphs[len(tokens)]
            g.replay()
            return graph_logits

        warm_clock(self.dev, self.args.spin_s)
        self.zero_caches(model)
        self.warm_up(run)
        sync(self.dev)
        out = {"wall": self.torch_pass(model, run, events=False)}
        if self.dev.type == "cuda":
            out["gpu_timed"] = self.torch_pass(model, run, events=True)
        return out

    def torch(self, model, precision: str) -> Dict[str, Dict[str, Any]]:
        out: Dict[str, Dict[str, Any]] = {}
        try:
            model = copy.deepcopy(model).to(self.dev)
        except Exception as e:  # noqa: BLE001 (out of memory, say: gpuu's numbers still count)
            return {name: {"error": f"{type(e).__name__}: {e}"} for name in RUNNERS[1:]}
        for name, graph in (("torch_eager", False), ("torch_graph", True)):
            if graph and self.dev.type != "cuda":
                out[name] = {"skipped": "CUDA graphs need --device cuda"}
                continue
            try:
                out[name] = self.torch_runner(model, graph)
                log(f"{name} {precision}: done")
            except Exception as e:  # noqa: BLE001 (one runner failing leaves the others' numbers)
                out[name] = {"error": f"{type(e).__name__}: {e}"}
                log(f"{name} {precision}: {out[name]['error']}")
        del model
        if self.dev.type == "cuda":
            torch.cuda.empty_cache()
        return out


def agreement(got: List[int], want: List[int], want_best_two: Optional[List[List[float]]] = None) -> Dict[str, Any]:
    """How many greedy tokens agree before the first difference (after it the two runs continue from different
    tokens, so later agreement says little), and the reference's margin there: its best logit less its second,
    also in f16 steps at the best's size (0 or 1: a tie that rounding decides, not a fault)."""
    same = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    out: Dict[str, Any] = {"agree": same, "of": len(want), "identical": got == want}
    if same < len(want) and want_best_two and same < len(want_best_two):
        best, second = want_best_two[same]
        out["margin_there"] = round(best - second, 6)
        out["margin_there_f16_steps"] = round((best - second) / float(np.spacing(np.float16(abs(best)))), 2)
    return out


def agreed(agree: Dict[str, Any]) -> str:
    """The table's agreement cell: "35/65", with eager's margin where the tokens part (in f16 steps)."""
    cell = f"{agree['agree']}/{agree['of']}"
    return cell + (f" (eager's margin there: {agree['margin_there_f16_steps']:g} f16 steps)"
                   if "margin_there_f16_steps" in agree else "")


def numbers(runner: Dict[str, Any]) -> Dict[str, Optional[float]]:
    """A runner's headline numbers: decode medians of its wall pass, GPU time from its timed pass."""
    wall, timed = runner.get("wall", {}), runner.get("gpu_timed", {})
    return {"decode_us": wall.get("decode", {}).get("step_us_median"),
            "tokens_per_s": wall.get("decode", {}).get("tokens_per_s"),
            "prefill_tokens_per_s": wall.get("prefill", {}).get("tokens_per_s"),
            "gpu_us": timed.get("decode", {}).get("gpu_us_median"),
            "prefill_gpu_us": timed.get("prefill", {}).get("gpu_us_median")}


def summary(r: Dict[str, Any]) -> Dict[str, Any]:
    """The headline numbers of one precision (ratios are times: below 1 means gpuu is faster)."""
    s: Dict[str, Any] = {}
    for runner in RUNNERS:
        s.update({f"{runner}_{k}": v for k, v in numbers(r.get(runner, {})).items()})
    s["gpuu_execute_us"] = r["gpuu"].get("wall", {}).get("decode", {}).get("execute_us_median")
    ratio = lambda a, b: round(a / b, 3) if a and b else None  # noqa: E731
    s["gpuu_wall_over_gpu"] = ratio(s["gpuu_decode_us"], s["gpuu_gpu_us"])
    # The same ratio within the gpu_timing pass alone (its wall includes the timestamps' cost).
    s["gpuu_timed_wall_over_gpu"] = ratio(r["gpuu"].get("gpu_timed", {}).get("decode", {}).get("step_us_median"),
                                          s["gpuu_gpu_us"])
    s["gpuu_over_eager"] = ratio(s["gpuu_decode_us"], s["torch_eager_decode_us"])
    s["gpuu_over_graph"] = ratio(s["gpuu_decode_us"], s["torch_graph_decode_us"])
    # Prefill as times too: one prefill's time is the prompt's tokens over its tokens/s.
    s["gpuu_prefill_over_eager"] = ratio(s["torch_eager_prefill_tokens_per_s"], s["gpuu_prefill_tokens_per_s"])
    s["gpuu_prefill_over_graph"] = ratio(s["torch_graph_prefill_tokens_per_s"], s["gpuu_prefill_tokens_per_s"])
    want = r.get("torch_eager", {}).get("wall", {}).get("tokens")
    want_best_two = r.get("torch_eager", {}).get("wall", {}).get("best_two")
    for runner in ("gpuu", "torch_graph"):
        got = r.get(runner, {}).get("wall", {}).get("tokens")
        if got is not None and want is not None:
            s[f"{runner}_tokens_vs_eager"] = agreement(got, want, want_best_two)
    return s


def table(result: Dict[str, Any]) -> str:
    fmt = lambda v: "-" if v is None else f"{v:.1f}"  # noqa: E731
    rows = [("precision", "runner", "prefill tok/s*", "prefill GPU us", "decode us/step", "decode tok/s",
             "decode GPU us/step", "tokens = eager")]
    notes = []
    for prec, r in result["precisions"].items():
        s = r["summary"]
        for runner in RUNNERS:
            why = r[runner].get("error") or r[runner].get("skipped")
            if why:
                notes.append(f"{prec} {runner}: {why}")
                continue
            agree = s.get(f"{runner}_tokens_vs_eager")
            rows.append((prec, runner, *(fmt(s[f"{runner}_{k}"]) for k in
                                         ("prefill_tokens_per_s", "prefill_gpu_us", "decode_us", "tokens_per_s",
                                          "gpu_us")),
                         agreed(agree) if agree else "(reference)" if runner == "torch_eager" else "-"))
        notes.append(f"{prec}: decode gpuu wall/GPU {fmt(s['gpuu_wall_over_gpu'])} (within the gpu_timing pass "
                     f"{fmt(s['gpuu_timed_wall_over_gpu'])}; execute without reading the logits "
                     f"back: {fmt(s['gpuu_execute_us'])} us), gpuu/eager {fmt(s['gpuu_over_eager'])}, "
                     f"gpuu/graph {fmt(s['gpuu_over_graph'])}; prefill gpuu/eager "
                     f"{fmt(s['gpuu_prefill_over_eager'])}, gpuu/graph {fmt(s['gpuu_prefill_over_graph'])} (times)")
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    prefill = result["prefill"]
    return "\n".join(lines + notes + [f"* prefill of {result['prompt_tokens']} tokens, {prefill}: "
                                      f"{PREFILL_METHODS[prefill]}"])


def log(message: str) -> None:
    print(f"[{datetime.datetime.now(datetime.timezone.utc):%H:%M:%S}] {message}", file=sys.stderr, flush=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", default="tiny", help="tiny, 125m or 1b")
    p.add_argument("--precisions", default="f32,f16",
                   help="comma-separated: f32, f16, and f16-w8, f16-w4g32, f16-w4g64, f16-w4g128 (the half model with "
                        "gpuu.quantize's weight-only linears; PyTorch runs the same op by dequantizing each call)")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu",
                   help="PyTorch's device (cuda or cpu); gpuu runs on its Vulkan device (GPUU_DEVICE)")
    p.add_argument("--prompt-tokens", type=int, default=16, help="the prompt's length (e.g. 128 for 125m and 1b)")
    p.add_argument("--prefill", default="one_step", choices=sorted(PREFILL_METHODS),
                   help="the prompt in one step, or one token per step as decode steps")
    p.add_argument("--prefill-repeats", type=int, default=5, help="one-step prefills timed per generation")
    p.add_argument("--decode-steps", type=int, default=64, help="decode steps timed after the prompt")
    p.add_argument("--warmup", type=int, default=10, help="untimed steps before each timed generation")
    p.add_argument("--torch-threads", type=int, help="PyTorch's CPU threads (default: its own choice; on a machine "
                   "whose cores others share, 1 keeps its thread pool from waiting on them)")
    p.add_argument("--spin-s", type=float, default=1.0, help="seconds of GPU work before each runner (CUDA only)")
    p.add_argument("--policy", default="vulkan_first", choices=["vulkan_first", "vgf_first"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--commit", default="unknown", help="the gpuu commit measured (for the JSON)")
    p.add_argument("--sample-dir", default=os.path.join(HERE, "..", "..", "samples", "llm"),
                   help="where llama_decode.py is")
    p.add_argument("--work-dir", help="where the programs are written (default: a temporary folder)")
    p.add_argument("--keep-programs", action="store_true")
    p.add_argument("--out", required=True, help="the JSON file to write")
    args = p.parse_args()

    sys.path.insert(0, os.path.abspath(args.sample_dir))
    import llama_decode as llama
    try:
        import gpuu
    except ImportError as e:
        sys.exit(f"cannot import gpuu ({e}): set PYTHONPATH to <build>/bindings/python or the wheel's folder")
    known = sizes(llama.LlamaConfig)
    if args.size not in known:
        sys.exit(f"unknown --size {args.size!r}: one of {', '.join(known)}")
    precisions = args.precisions.split(",")
    from gpuu import weight_only
    known_precisions = {"f32", "f16"} | {f"f16-{scheme}" for scheme in weight_only.SCHEMES}
    if set(precisions) - known_precisions:
        sys.exit(f"unknown precision(s) {sorted(set(precisions) - known_precisions)}: "
                 f"{', '.join(sorted(known_precisions))}")
    cfg = known[args.size]
    if args.prompt_tokens + args.decode_steps > cfg.max_len or args.warmup > cfg.max_len or args.prompt_tokens < 1:
        sys.exit(f"--prompt-tokens {args.prompt_tokens} + --decode-steps {args.decode_steps} and --warmup "
                 f"{args.warmup} must fit max_len {cfg.max_len} (and the prompt be at least 1 token)")
    if args.prefill_repeats < 1:
        sys.exit(f"--prefill-repeats {args.prefill_repeats} must be at least 1")
    dev = torch.device(args.device)
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    torch.backends.cuda.matmul.allow_tf32 = False  # f32 is f32, as in gpuu
    torch.backends.cudnn.allow_tf32 = False

    model = llama.LlamaDecoder(cfg, seed=args.seed)
    params = sum(t.numel() for t in model.parameters())
    prompt = torch.randint(0, cfg.vocab, (args.prompt_tokens,), generator=torch.Generator().manual_seed(args.seed))
    log(f"{args.size}: {params / 1e6:.1f}M parameters, {dataclasses.asdict(cfg)}")
    result: Dict[str, Any] = {
        "benchmark": "llm_decode", "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": args.commit, "device": torch.cuda.get_device_name(dev) if dev.type == "cuda" else "lavapipe/cpu",
        "torch_device": str(dev), "torch_threads": torch.get_num_threads(), "torch": torch.__version__,
        "cuda": torch.version.cuda, "gpuu": gpuu.__version__,
        "size": args.size, "config": dataclasses.asdict(cfg), "params": params, "seed": args.seed,
        "prompt_tokens": args.prompt_tokens, "prompt": prompt.tolist(), "prefill": args.prefill,
        "prefill_method": PREFILL_METHODS[args.prefill], "prefill_repeats": args.prefill_repeats,
        "decode_steps": args.decode_steps, "warmup": args.warmup, "policy": args.policy, "tf32": False,
        "timing": "a step is set the tokens and positions (gpuu: and the step's length where it changes), run, the "
                  "last token's logits ready (gpuu: read back to the host; PyTorch: on its device, synchronised); "
                  "greedy argmax is outside it. Medians over the timed steps.",
        "precisions": {},
    }
    with tempfile.TemporaryDirectory(prefix="gpuu_llm_") as tmp:
        args.work_dir = args.work_dir or tmp
        os.makedirs(args.work_dir, exist_ok=True)
        bench = Bench(llama, args, cfg, prompt.tolist(), dev)
        with torch.no_grad():
            for prec in precisions:
                m = model if prec == "f32" else copy.deepcopy(model).half()
                if prec.startswith("f16-"):  # weight-only quantized linears (gpuu.quantize), f16 activations
                    m = gpuu.quantize(m, scheme=prec[len("f16-"):])
                r = {"gpuu": bench.gpuu(m, model, prec), **bench.torch(m, prec)}
                r["summary"] = summary(r)
                result["precisions"][prec] = r
                if m is not model:
                    del m
    result["vulkan_device"] = next((r["gpuu"]["wall"]["vulkan_device"] for r in result["precisions"].values()
                                    if "vulkan_device" in r["gpuu"].get("wall", {})), None)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(f"{args.size} ({params / 1e6:.1f}M parameters) on {result['device']} (Vulkan: {result['vulkan_device']}), "
          f"{args.prompt_tokens} prompt tokens ({args.prefill}), {args.decode_steps} decode steps, medians")
    print(table(result))
    print(f"wrote {args.out}")
    # f32 must pick PyTorch's tokens; f16 reports its agreement only (half rounding may flip a near tie).
    f32 = result["precisions"].get("f32", {}).get("summary", {}).get("gpuu_tokens_vs_eager")
    failed = [k for k, r in result["precisions"].items() for runner in RUNNERS if "error" in r.get(runner, {})]
    if f32 is not None and not f32["identical"]:
        print(f"gpuu's f32 tokens differ from PyTorch's from token {f32['agree']}", file=sys.stderr)
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
