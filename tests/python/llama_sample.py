"""samples/llm/llama_decode.py (the Llama-style decoder sample) as a module, for the tests that drive it."""

import importlib.util
import os

_path = os.path.join(os.path.dirname(__file__), "..", "..", "samples", "llm", "llama_decode.py")
_spec = importlib.util.spec_from_file_location("llama_decode", _path)
llama = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(llama)
