"""Writes 64 KiB blocks to stderr until a write fails (or 64 MiB), then prints
"survived <bytes written> <error>" on stdout and exits 0."""
import os

block = b"flood " * (65536 // 6) + b"\n"
written = 0
error = "none"
while written < 64 << 20:
    try:
        written += os.write(2, block)
    except OSError as exc:
        error = exc.strerror or str(exc)
        break
print(f"survived {written} {error}", flush=True)
