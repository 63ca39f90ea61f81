"""Sixty-Six Arena: the tournament harness."""
