"""The progress bar of Caracal's long commands (probe, bench, tune, nodemap, testbed up),
drawn by rich on stderr, and only when stderr is a terminal: logs, pipes and tests that
read the output get the output alone.

With a number of steps it shows done/total, the time so far and rich's estimate of the
time left (from the steps' rate so far); without one, a spinner and the time so far.
Commands print their own lines (table rows on stdout) between clear() and draw(), so a
row never lands inside the bar.
"""
import sys
from typing import Optional


def decorated(stream) -> bool:
    """Whether ``stream`` is a terminal, where rich may draw; elsewhere output stays plain."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed or not a real file
        return False


class ProgressBar:
    def __init__(self, total: Optional[int], label: str, stream=None):
        self.stream = stream if stream is not None else sys.stderr
        self.total = None if total is None else max(int(total), 1)
        self.label = label
        self.done = 0
        self.enabled = decorated(self.stream)
        self._progress = None
        if self.enabled:
            self._progress, self._task = self._make()

    def _make(self):
        from rich.console import Console
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn,
                                   TimeElapsedColumn, TimeRemainingColumn)
        console = Console(file=self.stream)
        if self.total is None:
            cols = [SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn()]
        else:
            cols = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn()]
        # transient: the bar leaves no trace; no redirection: stdout stays the command's own
        p = Progress(*cols, console=console, transient=True, redirect_stdout=False, redirect_stderr=False)
        return p, p.add_task(self.label, total=self.total)

    def draw(self):
        """Show the bar (again, after clear())."""
        if self._progress is not None and not self._progress.live.is_started:
            self._progress.start()

    def clear(self):
        """Take the bar off the screen (before printing a line; at the end)."""
        if self._progress is not None and self._progress.live.is_started:
            self._progress.stop()

    def step(self, n: int = 1):
        self.done += n
        if self._progress is not None:
            self._progress.advance(self._task, n)
            self.draw()

    def __enter__(self):
        self.draw()
        return self

    def __exit__(self, *exc):
        self.clear()
