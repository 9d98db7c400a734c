"""capture — what Blender prints from C while an operator runs."""
import contextlib
import os
import sys
import tempfile


class StdoutCapture:
    """Blender prints operator reports (and render progress) to fd 1 from C, and a
    CANCELLED operator gives no other reason; so fd 1 is pointed at a reused temp file.

    `with CAPTURE:` around one call redirects fd 1 for that call (a few syscalls). Inside
    `with CAPTURE.batch():` (run_plan's steps) fd 1 is redirected once for the whole batch and
    each call only notes where its output starts; `text` is what the last call printed."""

    def __init__(self):
        self.file, self.saved, self.text = None, None, ""
        self.depth = 0          # redirections open (batch and call nest)
        self.start = 0

    def _open(self):
        if self.depth == 0:
            if self.file is None:
                self.file = tempfile.TemporaryFile()
            sys.stdout.flush()
            self.file.seek(0)
            self.file.truncate()
            self.saved = os.dup(1)
            os.dup2(self.file.fileno(), 1)
        self.depth += 1

    def _close(self):
        self.depth -= 1
        if self.depth == 0:
            sys.stdout.flush()
            os.dup2(self.saved, 1)
            os.close(self.saved)
            self.saved = None

    def __enter__(self):
        self._open()
        sys.stdout.flush()
        self.start = os.lseek(self.file.fileno(), 0, os.SEEK_CUR)
        return self

    def __exit__(self, *exc):
        sys.stdout.flush()
        end = os.lseek(self.file.fileno(), 0, os.SEEK_CUR)
        self.text = ""
        if end > self.start:
            self.text = os.pread(self.file.fileno(), min(4096, end - self.start), self.start) \
                .decode("utf-8", "replace").strip()
        self._close()
        return False

    @contextlib.contextmanager
    def batch(self):
        self._open()
        try:
            yield self
        finally:
            self._close()


CAPTURE = StdoutCapture()
