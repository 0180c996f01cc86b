"""Settings files: the environment a tuned run needs, one VAR=VALUE a line.

`caracal tune-app` writes them; `caracal run --settings FILE` reads them into every rank's
environment (--env on the same command line wins). Lines starting with # and blank lines
are ignored; anything else that is not NAME=VALUE is one UsageError line naming the file
and the line. The same file is what `env $(grep -v '^#' FILE) mpiexec ...` takes."""
import re
from pathlib import Path
from typing import Dict

from .errors import UsageError
from .frontend import read_small_text

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
MAX_BYTES = 1 << 20


def read(path) -> Dict[str, str]:
    text = read_small_text(path, MAX_BYTES, f"--settings {path}: no such file", "settings file")
    env = {}
    for i, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if "=" not in s or not NAME.match(s.split("=", 1)[0]):
            raise UsageError(f"--settings {path}: line {i} is not NAME=VALUE: {s[:60]!r}")
        k, v = s.split("=", 1)
        env[k] = v
    return env


def write(path, env: Dict[str, str], comments=()) -> None:
    lines = [f"# {c}" for c in comments] + [f"{k}={v}" for k, v in env.items()]
    Path(path).write_text("\n".join(lines) + "\n")
