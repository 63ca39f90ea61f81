"""Prints "ready" and sleeps until killed. argv: [MARKER]."""
import time

print("ready", flush=True)
while True:
    time.sleep(60)
