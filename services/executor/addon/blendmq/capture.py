"""capture — what Blender prints from C while an operator runs."""
import os
import sys
import tempfile


class StdoutCapture:
    """Blender prints operator reports (and render progress) to fd 1 from C, and a
    CANCELLED operator gives no other reason; so fd 1 is pointed at a reused temp file for
    the call. A few syscalls per call."""

    def __init__(self):
        self.file, self.saved, self.text = None, None, ""

    def __enter__(self):
        if self.file is None:
            self.file = tempfile.TemporaryFile()
        sys.stdout.flush()
        self.file.seek(0)
        self.file.truncate()
        self.saved = os.dup(1)
        os.dup2(self.file.fileno(), 1)
        return self

    def __exit__(self, *exc):
        sys.stdout.flush()
        os.dup2(self.saved, 1)
        os.close(self.saved)
        self.file.seek(0)
        self.text = self.file.read(4096).decode("utf-8", "replace").strip()
        return False


CAPTURE = StdoutCapture()
