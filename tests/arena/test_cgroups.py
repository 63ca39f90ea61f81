"""Per-bot control groups with the real kernel: limits, accounting, freezing and clean-up.

Skipped where the arena cannot make control groups (it needs root and cgroup v1 controllers
cpu, cpuacct, memory, pids and freezer, or cgroup v2 with cpu, memory and pids delegated).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from arena import runner
from arena.botproc import Limits, SandboxMode, bwrap_status, cgroups, cores, load_manifest, procfs, start_bot
from arena.botproc.cgroups import CgroupLimits, V2Hierarchy
from arena.matchplay import MatchSettings
from arena.runner import PairTask

from tests.polling import poll_until
from tests.requirements import require

from .conftest import BOTFIXTURES

ROOT = Path(__file__).resolve().parents[2]
NEEDS_CGROUPS = pytest.mark.requires("cgroups")
NEEDS_BWRAP = pytest.mark.requires("bubblewrap")
pytestmark = [pytest.mark.integration, NEEDS_CGROUPS]


def wait_until(condition: Callable[[], object], timeout: float = 10.0) -> object:
    return poll_until(condition, timeout, 0.005)


def _alive(pid: int) -> bool:
    info = procfs.read_stat(pid)
    return info is not None and info.state not in ("Z", "X")


@NEEDS_BWRAP
def test_the_whole_sandbox_is_in_the_bots_group_and_close_removes_it(tmp_path: Path) -> None:
    bot = start_bot(load_manifest(BOTFIXTURES / "sleeper"), run_dir=tmp_path, sandbox="bwrap")
    assert bot.cgroup is not None
    with bot:
        assert wait_until(lambda: bot.main_pid() is not None)
        members = bot.cgroup.pids()
        assert bot.pid in members  # bwrap itself joined before it started anything
        assert set(bot.sandbox_pids()) <= members
        dirs = bot.cgroup.hierarchy.dirs(bot.cgroup.rel)
        assert all(d.is_dir() for d in dirs)
    assert not any(d.exists() for d in dirs)


@pytest.mark.parametrize("mode", ["bwrap", "fallback"])
def test_kill_empties_the_group_even_of_a_detached_grandchild(tmp_path: Path, marker: str, mode: str) -> None:
    if mode == "bwrap":
        require("bubblewrap")
    bot = start_bot(load_manifest(BOTFIXTURES / "spawner"), run_dir=tmp_path, sandbox=mode, args=[marker])
    assert bot.cgroup is not None
    group = bot.cgroup
    assert wait_until(lambda: len(procfs.find_processes(marker)) >= 2)  # the bot and its setsid grandchild
    bot.close()
    assert group.pids() == set()
    assert procfs.find_processes(marker) == []


def test_a_frozen_bot_uses_no_cpu_and_a_thawed_one_is_capped(tmp_path: Path) -> None:
    limits = Limits(cpus=0.5)
    with start_bot(load_manifest(BOTFIXTURES / "cpuburn"), run_dir=tmp_path, sandbox="fallback",
                   limits=Limits(cpus=0.5)) as bot:
        assert bot.cgroup is not None
        assert wait_until(lambda: (bot.cpu_ns() or 0) > 20_000_000)  # it is burning
        bot.freeze()
        assert wait_until(lambda: bot.cgroup is not None and bot.cgroup.hierarchy.is_frozen(bot.cgroup.rel))
        frozen_at = bot.cpu_ns()
        time.sleep(0.3)  # a measurement window, not a race: nothing may run in it
        assert bot.cpu_ns() == frozen_at
        bot.thaw()
        start_cpu, start = bot.cpu_ns() or 0, time.monotonic()
        assert wait_until(lambda: (bot.cpu_ns() or 0) > start_cpu + 50_000_000)
        used = ((bot.cpu_ns() or 0) - start_cpu) / 1e9
        assert limits.cpus is not None
        assert used <= (time.monotonic() - start) * limits.cpus * 1.3 + 0.02  # the quota holds


def test_a_fork_bomb_is_bounded_by_the_pids_limit(tmp_path: Path, sock_dir: Path) -> None:
    with start_bot(load_manifest(ROOT / "bots/hostile/forkbomb"), run_dir=tmp_path, sandbox="fallback",
                   endpoint=f"ipc://{sock_dir}/arena.sock", token="t") as bot:  # it waits there for a welcome
        assert wait_until(lambda: "children" in bot.stderr_tail(), 30), bot.stderr_tail()
        children = int(bot.stderr_tail().split("forkbomb: ")[1].split()[0])
        assert 20 <= children < 64
        assert bot.cgroup is not None and len(bot.cgroup.pids()) <= 64
        assert bot.poll() is None  # it lives on (and would play) with what it has


def _cores_of(pid: int) -> frozenset[int] | None:
    """The cores process ``pid`` may run on (``Cpus_allowed_list``, e.g. ``0-2,5``)."""
    try:
        text = next(line.split(":")[1].strip() for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                    if line.startswith("Cpus_allowed_list:"))
    except (OSError, StopIteration):
        return None
    found: set[int] = set()
    for part in text.split(","):
        low, _, high = part.partition("-")
        found.update(range(int(low), int(high or low) + 1))
    return frozenset(found)


def _cores_to_pin_to() -> list[int]:
    """The cores this process may use; skips without a cpuset the arena can use, or 2 cores."""
    hier = cgroups.hierarchy()
    allowed = sorted(os.sched_getaffinity(0))
    if hier is None or not hier.pins or len(allowed) < 2:
        pytest.skip(f"needs a cpuset controller the arena can use and 2 cores (has {len(allowed)}): "
                    "mount cgroup v1's cpuset, or delegate cgroup v2's")
    return allowed


@pytest.mark.parametrize("pinned", [True, False])
def test_a_pinned_bot_runs_on_its_workers_core_whatever_affinity_it_asks_for(
        tmp_path: Path, sock_dir: Path, pinned: bool) -> None:
    allowed = _cores_to_pin_to()
    cores.take_slot(1)
    try:
        with start_bot(load_manifest(ROOT / "bots/hostile/cpuhog"), run_dir=tmp_path, sandbox="fallback",
                       endpoint=f"ipc://{sock_dir}/arena.sock", token="t", pinned=pinned) as bot:
            assert bot.cgroup is not None
            group = bot.cgroup
            # the bot and its 6 spinners, each of which asked for every core
            assert wait_until(lambda: len(group.pids()) >= 7, 30), group.pids()
            seen = {_cores_of(pid) for pid in group.pids()} - {None}
    finally:
        cores.take_slot(None)
    # slot 1 of the cores this process may use; unpinned, the spinners' ask for every core held
    assert seen == ({frozenset(allowed[1:2])} if pinned else {frozenset(allowed)})


def test_a_worker_pins_the_bots_of_lock_step_pairs_only(tmp_path: Path) -> None:
    # greedy is granted 8 games, but beside a bot that plays one at a time its pair is lock-step:
    # its process then serves one game at a time, and is pinned. Its next, multiplexed pair
    # gets a process of its own, not pinned.
    allowed = _cores_to_pin_to()
    one_at_a_time = tmp_path / "one-at-a-time"
    shutil.copytree(ROOT / "bots/random", one_at_a_time)
    toml = one_at_a_time / "bot.toml"
    toml.write_text(toml.read_text().replace('name = "random"', 'name = "one"')
                    .replace("max_games = 16", "max_games = 1"))
    settings = MatchSettings(sandbox=SandboxMode.FALLBACK, max_games=16)

    def pair(index: int, *bots: Path) -> PairTask:
        return PairTask(index, index, (str(bots[0]), str(bots[1])), ("a", "b"), settings, str(tmp_path / "run"))

    def cores_of_bots() -> set[tuple[str, frozenset[frozenset[int] | None]]]:
        pool = runner._session_pool(settings, str(tmp_path / "run"))
        return {(s.manifest.name, frozenset({_cores_of(p) for p in s.process.cgroup.pids()} - {None}))
                for s in pool.idle if s.process is not None and s.process.cgroup is not None}

    cores.take_slot(1)
    try:
        lock_step = runner.play_pairs([pair(0, one_at_a_time, ROOT / "bots/greedy")])
        after_lock_step = cores_of_bots()
        multiplexed = runner.play_pairs([pair(1, ROOT / "bots/greedy", ROOT / "bots/random"),
                                         pair(2, ROOT / "bots/greedy", ROOT / "bots/random")])
        after_both = cores_of_bots()
    finally:
        cores.take_slot(None)
        runner._session_pool(settings, str(tmp_path / "run")).close()
        runner._local.pool = None
    played = [match for pair_played in lock_step + multiplexed for match in pair_played.outcomes]
    assert len(played) == 6 and not any(match.void or match.faults for match in played)
    mine, every = frozenset({frozenset(allowed[1:2])}), frozenset({frozenset(allowed)})
    assert after_lock_step == {("one", mine), ("greedy", mine)}
    assert after_both == {("one", mine), ("greedy", mine), ("greedy", every), ("random", every)}


def test_the_v2_backend_writes_the_limits_the_kernel_expects(tmp_path: Path) -> None:
    """cgroup v2 is not mounted with controllers on this machine: the files it writes are
    checked in a plain folder standing in for the scope (the kernel's formats)."""
    hier = V2Hierarchy(tmp_path)
    (tmp_path / "run").mkdir()
    hier.make("run/bot-1-1", CgroupLimits(pids=64, memory_bytes=1 << 30, cpus=1.0))
    group = tmp_path / "run" / "bot-1-1"
    assert (tmp_path / "cgroup.subtree_control").read_text() == "+cpu +memory +pids"
    assert (tmp_path / "run" / "cgroup.subtree_control").read_text() == "+cpu +memory +pids"
    assert (group / "pids.max").read_text() == "64"
    assert (group / "memory.max").read_text() == str(1 << 30)
    assert (group / "cpu.max").read_text() == "100000 100000"
    assert (tmp_path / "cpu.weight").read_text() == "100"  # no more than an ordinary process: the bots never starve the arena
    hier.set_frozen("run/bot-1-1", True)
    assert (group / "cgroup.freeze").read_text() == "1"
    (group / "cpu.stat").write_text("usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n")
    assert hier.cpu_ns("run/bot-1-1") == 1_500_000
    (group / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert hier.oom_kills("run/bot-1-1") == 1


def test_the_v2_backend_pins_a_group_where_the_scope_may_use_cpusets(tmp_path: Path) -> None:
    (tmp_path / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    hier = V2Hierarchy(tmp_path)
    hier.make("run/bot-1-1", CgroupLimits(cores=(1,)))
    hier.make("run/bot-1-2", CgroupLimits())
    assert hier.pins
    assert (tmp_path / "run" / "cgroup.subtree_control").read_text() == "+cpu +memory +pids +cpuset"
    assert (tmp_path / "run" / "bot-1-1" / "cpuset.cpus").read_text() == "1"
    assert not (tmp_path / "run" / "bot-1-2" / "cpuset.cpus").exists()  # the parent's cores
    with pytest.raises(ValueError, match="cores"):
        CgroupLimits(cores=())


def test_detection_explains_why_there_are_no_groups(tmp_path: Path) -> None:
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text("23 1 0:21 / /proc rw - proc proc rw\n")
    own = tmp_path / "cgroup"
    own.write_text("0::/\n")
    hier, reason = cgroups.detect(mountinfo, own)
    assert hier is None and "cpu is not mounted" in reason


def test_a_cpuset_the_arena_cannot_use_leaves_bots_unpinned_and_limited(tmp_path: Path) -> None:
    # cgroup v1 as mounted here, but the cpuset controller's mount is a plain folder with none
    # of its files: the probe with cpuset fails, and the one without it is taken.
    real = Path("/proc/self/mountinfo").read_text().splitlines()
    cpuset = [line for line in real if line.split(" - ")[-1].startswith("cgroup ") and "cpuset" in line.split()[-1]]
    hier = cgroups.hierarchy()
    if hier is None or hier.kind != "v1" or not cpuset:
        pytest.skip("needs cgroup v1 groups the arena can use, with a cpuset mount")
    fake = tmp_path / "cpuset"
    fake.mkdir()
    fields = cpuset[0].split(" ")
    fields[4] = str(fake)
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text("\n".join([" ".join(fields) if line == cpuset[0] else line for line in real]) + "\n")
    hier, reason = cgroups.detect(mountinfo, Path("/proc/self/cgroup"))
    assert hier is not None and reason == "ok"
    assert not hier.pins and hier.kind == "v1"


def test_without_groups_the_arena_warns_once_and_plays(tmp_path: Path) -> None:
    env = {**os.environ, "ARENA_CGROUPS": "off"}
    done = subprocess.run([sys.executable, "-m", "arena.cli", "match", str(ROOT / "bots/random"), str(ROOT / "bots/random"),
                           "--seed", "3"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("control groups unavailable") == 1, done.stderr


def test_a_run_keeps_an_empty_group_frozen_until_it_is_cleared() -> None:
    """cgroup v1 only: with no other group frozen, each freeze and thaw of a bot turns the
    kernel's freezer switch and patches kernel code on every CPU (FREEZER_ANCHOR_WHY)."""
    hier = cgroups.hierarchy()
    assert hier is not None
    if hier.kind != "v1":
        pytest.skip("the freezer anchor is for cgroup v1 (the v2 freezer has no such switch)")
    run = cgroups.RunGroups(cgroups.new_run_id(), watch=False)
    anchor = f"{run.run_id}/{cgroups.FREEZER_ANCHOR}"
    try:
        first = run.new_bot("first", CgroupLimits())
        second = run.new_bot("second", CgroupLimits())
        assert first is not None and second is not None
        assert hier.is_frozen(anchor) and hier.pids(anchor) == set()
        first.freeze()
        first.thaw()
        second.freeze()
        assert hier.is_frozen(anchor) and not hier.is_frozen(first.rel) and hier.is_frozen(second.rel)
        assert run.clear_launched_by([os.getpid()]) == 2  # the bots' groups; the anchor is nobody's launch
        assert hier.is_frozen(anchor)
    finally:
        assert run.clear()
    assert not any(d.exists() for d in hier.dirs(run.run_id))


@NEEDS_BWRAP
def test_a_sandbox_init_orphaned_mid_launch_is_ended_by_the_next_run(tmp_path: Path) -> None:
    """The leftover a killed arena used to leave: bwrap killed between cloning its init and releasing it
    leaves the init blocked on an eventfd, parent PID 1. Made on purpose here: bwrap writes
    its --info-fd report before it releases the child, so a full info pipe holds it there."""
    run = cgroups.RunGroups(cgroups.new_run_id(), watch=False)
    group = run.new_bot("orphan", CgroupLimits())
    assert group is not None
    info_r, info_w = os.pipe()
    os.set_blocking(info_w, False)
    try:
        while True:
            os.write(info_w, b"x" * 65536)
    except BlockingIOError:
        pass
    os.set_blocking(info_w, True)
    bwrap = bwrap_status()[0]
    assert bwrap is not None
    outer = subprocess.Popen([*group.join_prefix(), bwrap, "--unshare-pid", "--info-fd", str(info_w),
                              "--ro-bind", "/", "/", "--", "sleep", "600"],
                             pass_fds=(info_w,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env={**os.environ, cgroups.ENV_RUN: run.run_id})
    os.close(info_w)
    cgroups.record_launch(tmp_path, run.run_id, outer.pid, group)
    try:
        child = wait_until(lambda: procfs.descendants(outer.pid))
        assert isinstance(child, list) and child
        init = child[0]
        outer.send_signal(signal.SIGKILL)
        outer.wait(10)
        assert wait_until(lambda: (procfs.read_stat(init) or procfs.ProcInfo(0, 0, 0, "X")).ppid != outer.pid)
        assert _alive(init) and init in group.pids()  # orphaned, stuck, and still in the bot's group
        ended = cgroups.sweep_leftovers(tmp_path, current="a-later-run")
        assert ended >= 1
        assert wait_until(lambda: not _alive(init))
        assert group.pids() == set()
        assert not list((tmp_path / cgroups.RUNS_FOLDER).iterdir())  # the record is done with
    finally:
        os.close(info_r)
        run.clear()


@NEEDS_BWRAP
def test_decision_cpu_times_add_up_to_what_the_bots_used_without_overlap(tmp_path: Path) -> None:
    # The conductor reads a bot's CPU counter at most once per poll round, and processes outlive
    # conductors (one per match here): no reading may stand for two moments, and most of what the
    # bots used (they answer, then are frozen) is in their decisions.
    from arena.matchplay import MatchSettings, SessionPool, play_match

    manifest = load_manifest(ROOT / "bots/random")
    with SessionPool(tmp_path, MatchSettings()) as pool:
        play_match(pool, (manifest, manifest), "warm", 0)
        sessions = list(pool.idle)
        before = [s.process.cpu_ns() or 0 for s in sessions if s.process]
        outcomes = [play_match(pool, (manifest, manifest), f"m{i}", i) for i in range(1, 13)]
        after = [s.process.cpu_ns() or 0 for s in sessions if s.process]
    assert len(sessions) == 2 and all(o.winner is not None for o in outcomes)
    cpu_ms = [t.cpu_ms for o in outcomes for t in o.think_ms]
    assert all(ms is not None and ms >= 0 for ms in cpu_ms)
    used_ms = (sum(after) - sum(before)) / 1e6
    assert 0.5 * used_ms <= sum(ms for ms in cpu_ms if ms is not None) <= used_ms + 0.5
