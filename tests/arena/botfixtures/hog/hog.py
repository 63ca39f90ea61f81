"""Allocates (and touches) memory without bound until the address-space limit stops it."""
chunks = []
while True:
    block = bytearray(8 << 20)
    block[::4096] = b"x" * len(block[::4096])
    chunks.append(block)
