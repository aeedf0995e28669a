"""Backends by id, built in or loaded from plugin files (docs/plugins.md)."""
import os
from typing import List, NamedTuple, Optional, Sequence, Union

from . import gpuu_c as _c


class BackendInfo(NamedTuple):
    id: str
    version: int
    plugin_path: Optional[str]  # None for a built-in backend


def load_plugins(paths: Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]]) -> int:
    """Loads the backend plugins in `paths` (directories or files, absolute); returns how many
    backends it registered. A refused file raises InvalidArgumentError listing every refusal,
    after the others have loaded."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    return _c.gpuu_backends_load(":".join(os.fspath(p) for p in paths))


def list_backends() -> List[BackendInfo]:
    """Every registered backend: built-in first, then plugins in load order."""
    return [BackendInfo(_c.gpuu_backends_id(i), _c.gpuu_backends_version(i), _c.gpuu_backends_plugin_path(i))
            for i in range(_c.gpuu_backends_count())]
