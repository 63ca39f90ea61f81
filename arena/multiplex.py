"""Multiplexed tournaments: several pairs per worker task, one future per pair for the runner.

A tournament's ``max_games`` setting caps how many games one bot process plays at once; each
bot is granted the smaller of that cap and what it announces (``max_games`` in its
``bot.toml`` and its hello). Consecutive pairs whose bots can all take ``k`` games at once go
to one worker as one batch of at most ``WAVES * k`` pairs. The worker plays them through one
conductor (``matchplay.play_at_once``) with about ``k`` pairs in play at once (four processes
of ``k`` games: a pair's halves never share a process) and starts the next match as soon as
one ends, so only a batch's last matches run with the processes part idle. With a cap of 1,
or bots that announce 1, every batch holds one pair and its halves are played one after the
other (lock-step).

The runner keeps one future per pair: ``submit_pairs`` fans a batch's result out to them, so
its bookkeeping (storing, re-queueing after a worker died) is the same in both modes.
"""

from __future__ import annotations

import concurrent.futures as cf
import functools
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from arena.botproc import Manifest, load_manifest


class BatchTask(Protocol):
    """What batching needs to know of a pair task (``runner.PairTask`` has it)."""

    @property
    def bot_dirs(self) -> tuple[str, str]: ...

    @property
    def fingerprints(self) -> tuple[str, ...]: ...

    @property
    def settings(self) -> Any: ...

    @property
    def alone(self) -> bool: ...


WAVES = 4  # a batch holds this many times the pairs in play at once: one tail per WAVES refills


@functools.lru_cache(maxsize=256)
def _manifest(bot_dir: str, fingerprint: str) -> Manifest:
    return load_manifest(bot_dir)


def task_manifests(task: BatchTask) -> tuple[Manifest, Manifest]:
    """The manifests of ``task``'s bots, read once per process and version of each folder (the
    fingerprint the task names: a pair is played only while its folders still have it; a task
    without fingerprints names folders that never change, such as the ladder's submissions)."""
    prints = task.fingerprints or ("", "")
    return _manifest(task.bot_dirs[0], prints[0]), _manifest(task.bot_dirs[1], prints[1])


def games_at_once(task: BatchTask) -> int:
    """How many of its games both bots of ``task`` may play at once: the setting caps what they
    announce; ``fresh`` settings (new processes for every match), and a pair to be played alone
    (its worker died under a batch of several), play one."""
    cap: int = 1 if task.settings.fresh or task.alone else task.settings.max_games
    return max(1, min(cap, *(manifest.max_games for manifest in task_manifests(task))))


def batch_size(task: BatchTask) -> int:
    """The most pairs a batch holding ``task`` may have: ``WAVES`` refills of the pairs its bots
    play at once; one for lock-step."""
    k = games_at_once(task)
    return 1 if k == 1 else WAVES * k


def pairs_in_flight(concurrency: int, upcoming: Sequence[BatchTask]) -> int:
    """How many pairs the runner keeps submitted: two batches per worker."""
    return 2 * concurrency * (batch_size(upcoming[0]) if upcoming else 1)


def batches(tasks: Sequence[BatchTask], workers: int = 1) -> list[list[Any]]:
    """``tasks`` cut, in order, into batches no longer than any of their pairs' ``batch_size``,
    about equal and a multiple of ``workers`` in number when there are enough tasks (pass
    ``workers=1`` for full batches while more tasks follow)."""
    cut: list[list[Any]] = []
    if not tasks:
        return cut
    limit = 0
    most = max((batch_size(task) for task in tasks), default=1)
    rounds = -(-len(tasks) // (max(1, workers) * most))  # batches per worker, then evened out:
    share = -(-len(tasks) // (max(1, workers) * rounds))
    for task in tasks:
        room = min(share, batch_size(task))
        if cut and len(cut[-1]) < min(limit, room):
            cut[-1].append(task)
            limit = min(limit, room)
        else:
            cut.append([task])
            limit = room
    return cut


def submit_pairs(executor: cf.Executor, play_one: Callable[[Any], Any], play_many: Callable[[list[Any]], list[Any]],
                 tasks: Sequence[BatchTask], workers: int = 1) -> dict[cf.Future[Any], Any]:
    """Submit ``tasks`` in batches (``play_one`` for a batch of one), shared among ``workers``;
    one future per task.

    A batch's failure (e.g. its worker died) or cancellation reaches each of its futures.
    """
    futures: dict[cf.Future[Any], Any] = {}
    for batch in batches(tasks, workers):
        if len(batch) == 1:
            futures[executor.submit(play_one, batch[0])] = batch[0]
            continue
        mine: list[cf.Future[Any]] = [cf.Future() for _ in batch]
        futures.update(zip(mine, batch))
        executor.submit(play_many, batch).add_done_callback(functools.partial(_fan_out, mine))
    return futures


def _fan_out(mine: list[cf.Future[Any]], done: cf.Future[list[Any]]) -> None:
    if done.cancelled():
        for future in mine:
            future.cancel()
        return
    error = done.exception()
    results: list[Any] = [None] * len(mine) if error is not None else done.result()
    for future, result in zip(mine, results):
        if future.done():  # cancelled on its own
            continue
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)
