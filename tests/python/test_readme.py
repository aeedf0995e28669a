"""The README's Python example runs as printed (in a scratch directory, with the package under test)."""

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_readme_python_example_runs_as_printed(tmp_path):
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    blocks = re.findall(r"python3 - <<'PY'\n(.*?)\nPY\n", readme, re.S)
    assert len(blocks) == 1, "the README should hold exactly one python3 heredoc example"
    done = subprocess.run([sys.executable, "-c", blocks[0]], cwd=tmp_path, capture_output=True, text=True,
                          env=dict(os.environ), timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "max error vs eager:" in done.stdout
    error = float(done.stdout.split("max error vs eager:")[1].split()[0])
    assert error < 1e-4, done.stdout
    assert (tmp_path / "model.gpuu").exists() and (tmp_path / "model_ep.gpuu").exists()
    assert any(name.endswith(".vgf") for name in os.listdir(tmp_path / "vgf_out"))
