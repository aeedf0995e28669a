"""Running standalone VGF files (Arm-made ones, say): gpuu.load_vgf(path).run(inputs) -> outputs."""

from __future__ import annotations

import os
from typing import Any, Union

from . import core
from .runtime import LoadedProgram


class LoadedVgf(LoadedProgram):
    """A standalone VGF file (one Arm's model converter wrote, say) with a session ready to run it.

    The program has one VGF delegate; its inputs and outputs are the file's model
    inputs and outputs, named by the file (input_<i> / output_<i> where it has no names).
    """

    def __init__(self, path: Union[str, os.PathLike], **runtime_options: Any) -> None:
        self.path = os.fspath(path)
        with core.Program.from_vgf(path=self.path) as program:
            self.delegates = program.delegates
            self.session = core.Session(program, core.session_options(**runtime_options))


def load_vgf(path: Union[str, os.PathLike], **runtime_options: Any) -> LoadedVgf:
    """Loads the standalone VGF file at `path` and initialises a session that runs it.

    Takes the runtime options of gpuu.load (token, group_id, mode, sync_mode,
    device, validation, vgf_path, gpu_timing, backend_options). Raises InvalidFormatError for a file that is not VGF or
    is corrupt, UnsupportedError for one gpuu cannot run (several segments, a TOSA
    operator or element type gpuu lacks), IoError when it cannot be read; the
    message names the problem.
    """
    return LoadedVgf(path, **runtime_options)
