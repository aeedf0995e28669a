"""Running program files from Python: gpuu.load(path, **runtime_options).run(inputs) -> outputs."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

from . import core


class LoadedProgram(core._ClosesOnExit):
    """A program file with a session ready to run it (gpuu_program_load_file + gpuu_session_create).

    run() takes one array per program input (dtype and shape must match
    `inputs`; a program with dims runs at the sizes the arrays give, within
    the dims' bounds, and `inputs`/`outputs` follow) and returns one new numpy
    array per output. Not thread-safe: use
    one LoadedProgram per thread. Release it with close() or a `with` block.
    """

    def __init__(self, path: Union[str, os.PathLike], token: Optional[str] = None, group_id: Optional[int] = None,
                 mode: Optional[str] = None, sync_mode: Optional[str] = None, device: Optional[str] = None,
                 validation: Optional[bool] = None, vgf_path: Optional[str] = None, gpu_timing: bool = False,
                 backend_options: Optional[Mapping[str, Mapping[str, str]]] = None, profile: bool = False,
                 device_memory_limit: int = 0,
                 pipeline_cache: Optional[Union[str, os.PathLike]] = None, max_shape_variants: int = 0) -> None:
        self.path = os.fspath(path)
        with core.Program(path=self.path) as program:
            self.delegates: List[str] = program.delegates
            options = core.session_options(token=token, group_id=group_id, mode=mode, sync_mode=sync_mode,
                                           device=device, validation=validation, vgf_path=vgf_path,
                                           gpu_timing=gpu_timing, backend_options=backend_options,
                                           profile=profile, device_memory_limit=device_memory_limit,
                                           pipeline_cache=pipeline_cache, max_shape_variants=max_shape_variants)
            # The session keeps its own reference to the program.
            self.session = core.Session(program, options)

    @property
    def inputs(self) -> List[core.TensorInfo]:
        return self.session.inputs

    @property
    def outputs(self) -> List[core.TensorInfo]:
        return self.session.outputs

    @property
    def sync_mode(self) -> str:
        return self.session.sync_mode

    # Program states (core.Session says more): kept from one run to the next.
    @property
    def states(self) -> List[core.TensorInfo]:
        return self.session.states

    @property
    def state_names(self) -> List[str]:
        return self.session.state_names

    def state(self, state: Union[int, str]) -> np.ndarray:
        """A state, by name or index, as a new array."""
        return self.session.state(state)

    def set_state(self, state: Union[int, str], array: Any) -> None:
        self.session.set_state(state, array)

    def reset_state(self) -> None:
        self.session.reset_state()

    def run(self, inputs: Sequence[Any]) -> List[np.ndarray]:
        """Sets every input, executes, and returns the outputs as new arrays."""
        inputs = list(inputs)
        if len(inputs) != len(self.inputs):
            raise ValueError(f"the program takes {len(self.inputs)} input(s) "
                             f"({', '.join(i.name for i in self.inputs)}), got {len(inputs)}")
        arrays = [np.asarray(x) for x in inputs]
        # A program with dims runs at the sizes the arrays have (the session checks them against the bounds).
        if any(a.shape != info.shape for a, info in zip(arrays, self.inputs)):
            self.session.set_input_shapes([a.shape for a in arrays])
        for i, x in enumerate(arrays):
            self.session.set_input(i, x)
        self.session.execute()
        return [self.session.get_output(i) for i in range(len(self.outputs))]

    @property
    def dims(self) -> Dict[str, int]:
        """The sizes the program runs at now, by dim name (a program exported with dynamic_shapes); empty if none."""
        return self.session.dims

    @property
    def shape_variant_count(self) -> int:
        """How many sets of sizes the session holds ready (max_shape_variants at most; 1 without dims)."""
        return self.session.shape_variant_count

    def last_execute_stats(self) -> core.ExecuteStats:
        return self.session.last_execute_stats()

    def memory(self) -> Dict[str, int]:
        """Device memory the session holds (Session.memory): tensors, states, workspaces, weights, staging,
        backend_private."""
        return self.session.memory()

    def context(self) -> core.Context:
        return self.session.context()

    def profile(self) -> Dict[str, Any]:
        """Where the last run's time went (load(..., profile=True)), as gpuu_session_profile_json
        describes it: "devices" with their measured peaks, "plan" (delegates with their
        dispatches, CPU-fallback steps), "by_op". FailedPreconditionError without profile=True
        or before a run."""
        return json.loads(self.session.profile_json())

    def profile_trace(self, path: Union[str, os.PathLike]) -> None:
        """Writes the last run's Chrome trace (chrome://tracing, Perfetto) to `path`."""
        trace = self.session.profile_trace()
        with open(os.fspath(path), "w", encoding="utf-8") as f:
            f.write(trace)

    def profile_text(self, top: int = 10) -> str:
        """The last run's profile as a table (as gpuu-run --profile prints it)."""
        return self.session.profile_text(top)

    def close(self) -> None:
        self.session.close()


def load(path: Union[str, os.PathLike], *, token: Optional[str] = None, group_id: Optional[int] = None,
         mode: Optional[str] = None, sync_mode: Optional[str] = None, device: Optional[str] = None,
         validation: Optional[bool] = None, vgf_path: Optional[str] = None,
         gpu_timing: bool = False, backend_options: Optional[Mapping[str, Mapping[str, str]]] = None,
         profile: bool = False, device_memory_limit: int = 0,
         pipeline_cache: Optional[Union[str, os.PathLike]] = None, max_shape_variants: int = 0) -> LoadedProgram:
    """Loads the program at `path` and initialises its delegates.

    Runtime options override what the file's compile specs say (None keeps it):
      token, group_id: the shared context's key; mode: "disabled", "lookup_only",
      "lookup_or_create", "create_only"; sync_mode: "timeline", "queue_wait_idle",
      "none"; device: a device index or name substring (default: GPUU_DEVICE, else
      the first GPU); validation: enable the Khronos validation layer (default:
      GPUU_VALIDATION=1); gpu_timing: measure the delegates' GPU time
      (last_execute_stats().gpu_time_us), at some cost to speed;
      backend_options: each backend's load-time options, {backend id: {key: value}}
      (gpuu-inspect --backends lists them), e.g. {"VgfBackend": {"data_graph_path":
      "native"}}: "auto" (native VK_ARM_data_graph where the device has it, else gpuu's
      TOSA executor), "native" or "executor"; vgf_path: the same choice, as before 0.6
      (giving both, different, is an error); profile: profile every run (program.profile(),
      program.profile_trace(path)): a GPU timestamp after every dispatch, which serialises the
      GPU, and, the first time on a device, a brief measurement of its peak rates;
      device_memory_limit: the device memory the session may take, in bytes (0: no limit;
      OutOfMemoryError naming the need, its parts and the limit when the plan does not fit);
      pipeline_cache: a file that keeps the driver's compiled pipelines across processes, so a
      later load on the same device and driver skips compiling them (one made elsewhere or
      damaged is replaced with a warning, never an error); max_shape_variants: for a program with
      dims, how many sets of sizes the session keeps ready, each specialized and recorded once
      (0: the default, 4; the least recently used goes first; shape_variant_count says how many
      it holds).
    Raises a GpuuError subclass naming the delegate that failed (NotFoundError for
    lookup_only with nothing registered, UnsupportedError for a missing feature, ...),
    InvalidArgumentError naming every bad backend option at once.
    """
    return LoadedProgram(path, token=token, group_id=group_id, mode=mode, sync_mode=sync_mode, device=device,
                         validation=validation, vgf_path=vgf_path, gpu_timing=gpu_timing,
                         backend_options=backend_options, profile=profile,
                         device_memory_limit=device_memory_limit, pipeline_cache=pipeline_cache,
                         max_shape_variants=max_shape_variants)
