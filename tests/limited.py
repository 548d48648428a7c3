"""Run the ``skshapley`` command in a new process under memory and time limits.

For the tests that feed the command hostile input (mutated model files, bombs,
signals): whatever the input, the process must end by itself, within its
limits, with status 0 or one clean error line, never a crash or a traceback.
"""

import resource
import subprocess
import sys

# Address space of the child: importing numpy, pandas, scikit-learn, xgboost
# and lightgbm reserves about 2 GB of it (mostly untouched), so 4 GB leaves
# each run about 2 GB to allocate before it is refused.
MEMORY_LIMIT_BYTES = 4 * 2**30

# CPU seconds of the child; a run that is still busy after this is a hang.
CPU_LIMIT_SECONDS = 120


def _limit(memory_bytes: int, cpu_seconds: int):
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


def run_limited(
    args,
    *,
    cwd,
    memory_bytes: int = MEMORY_LIMIT_BYTES,
    cpu_seconds: int = CPU_LIMIT_SECONDS,
    code: str | None = None,
):
    """Run ``skshapley *args`` (or the Python ``code``) in a limited process.

    Returns ``(status, stdout, stderr)``. A process killed by a signal has a
    negative status (``-9`` for the CPU limit, ``-11`` for a segfault, ``-6``
    for an abort); the wall-clock timeout is a hang guard only, four times
    the CPU limit.
    """
    command = ["-c", code, *map(str, args)] if code else ["-m", "skshapley.cli"]
    if not code:
        command += [str(arg) for arg in args]
    result = subprocess.run(
        [sys.executable, *command],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=4 * cpu_seconds,
        preexec_fn=_limit(memory_bytes, cpu_seconds),
    )
    return result.returncode, result.stdout, result.stderr


def assert_clean_outcome(status: int, stderr: str) -> None:
    """Status 0, or 1 with exactly one ``skshapley: error:`` line on stderr."""
    assert status in (0, 1), f"status {status}: {stderr[-2000:]}"
    assert "Traceback" not in stderr, stderr[-2000:]
    if status == 1:
        lines = stderr.strip().splitlines()
        assert len(lines) == 1, stderr[-2000:]
        assert lines[0].startswith("skshapley: error: "), stderr[-2000:]
