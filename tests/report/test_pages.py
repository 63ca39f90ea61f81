"""The static report of a real tournament: its numbers are the store's and the leaderboard's."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import asdict
from pathlib import Path

import pytest

from arena.botproc.cgroups import hierarchy
from arena.cli import main
from arena.engine import Hand, Rules
from results.leaderboard import Leaderboard, build_leaderboard
from results.store import DB_NAME, Store

from .conftest import XSS_LABEL, LiveRun
from .html import Node, parse, table_rows

pytestmark = pytest.mark.e2e

ESCAPED_LABEL = "&lt;script&gt;alert(1)&lt;/script&gt;"


@pytest.fixture(scope="module")
def board(live_run: LiveRun) -> Leaderboard:
    with Store(live_run.out / DB_NAME, readonly=True) as store:
        return build_leaderboard(store)


@pytest.fixture(scope="module")
def db(live_run: LiveRun) -> dict:
    """The store's rows, read directly (not through the report's own code)."""
    with Store(live_run.out / DB_NAME, readonly=True) as store:
        tid = store.tournament().id
        matches = store.matches(tid)
        by_row = {m.id: m for m in matches}
        return {
            "bots": [e.bot for e in store.entrants(tid)],
            "labels": [e.bot.label for e in store.entrants(tid)],
            "matches": [asdict(m) for m in matches],
            "hands": [{**asdict(h), "match_id": by_row[h.match_row].match_id, "seat0": by_row[h.match_row].seat0,
                       "seat1": by_row[h.match_row].seat1} for h in store.all_hands(tid)],
            "faults": [asdict(f) for f in store.faults(tid)],
        }


def page(site: Path, name: str) -> Node:
    return parse((site / name).read_text(encoding="utf-8"))


def replay_data(site: Path, match_id: str) -> dict:
    doc = page(site, f"matches/{match_id}.html")
    script = doc.by_id("replay-data")
    assert script.attrs["type"] == "application/json"
    return json.loads(script.text)


def test_leaderboard_shows_the_numbers_of_build_leaderboard_and_the_terminal_table(
        live_run: LiveRun, site_dir: Path, board: Leaderboard, capsys: pytest.CaptureFixture[str]) -> None:
    doc = page(site_dir, "index.html")
    rows = table_rows(doc.by_id("leaderboard"))
    expected = [[str(s.rank), s.bot, f"{s.bt.elo:.0f}", f"{s.bt.elo_ci95[0]:.0f}..{s.bt.elo_ci95[1]:.0f}",
                 f"{s.bt.rank_ci95[0]}-{s.bt.rank_ci95[1]}", f"{s.bt.p_top1:.2f}", f"{s.mu:.2f}", f"{s.sigma:.2f}",
                 f"{s.conservative:.2f}", "", str(s.matches), f"{s.wins}-{s.losses}", f"{s.score_pct:.1f}",
                 f"{s.points_per_hand:.3f}", str(s.faults)]
                for s in board.standings]
    assert rows == expected
    assert board.pairs_done == board.pairs_total == 6 and sum(s.matches for s in board.standings) == 24
    progress = doc.by_id("progress")
    assert (progress.attrs["data-pairs-done"], progress.attrs["data-pairs-total"]) == ("6", "6")

    assert main(["leaderboard", str(live_run.out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    terminal = [line.split() for line in lines[lines.index(next(x for x in lines if x.startswith("---"))) + 1:]]
    table = [line for line in terminal if line and not line[0].startswith("statistically")]
    assert table == [row[:9] + row[10:] for row in rows]
    assert board.ranked_by == "bt" and doc.by_id("ranked-by").attrs["data-rating"] == "bt"  # finished: BT ranks
    assert [s.rank for s in board.standings] == [1, 2, 3, 4]
    assert [s.bt.elo for s in board.standings] == sorted((s.bt.elo for s in board.standings), reverse=True)
    heat = doc.by_id("p-better").find("td", class_="p")
    assert len(heat) == 12
    for cell in heat:
        row = next(s for s in board.standings if str(s.entrant) == cell.attrs["data-row"])
        col = next(s for s in board.standings if str(s.entrant) == cell.attrs["data-col"])
        assert float(cell.attrs["data-p"]) == board.p_better[row.bot][col.bot]
    tied = doc.by_id("tied-groups")
    assert [" = ".join(a.text for a in li.find("a")) for li in tied.find("li")] == [
        " = ".join(group) for group in board.tied_groups]

    chart = doc.by_id("rating-chart")
    series = chart.find("g", class_="series")
    assert [g.attrs["data-entrant"] for g in series] == [str(e) for e in range(4)]
    # one point per rated pair plus the prior: 6 pairs -> 7 points on every mu line
    for g in series:
        line = g.find("path", class_="line")[0].attrs["d"]
        assert len(re.findall(r"[ML]", line)) == 7


def test_crosstable_cells_are_the_leaderboards(site_dir: Path, board: Leaderboard, db: dict) -> None:
    labels = db["labels"]
    cells = page(site_dir, "crosstable.html").find("td", class_="h2h")
    assert len(cells) == 12
    for cell in cells:
        row, col = labels[int(cell.attrs["data-row"])], labels[int(cell.attrs["data-col"])]
        expected = board.crosstable[row][col]
        shown = (int(cell.attrs["data-wins"]), int(cell.attrs["data-matches"]))
        assert shown == (expected["wins"], expected["matches"])
        assert cell.text.startswith(f"{round(100 * expected['wins'] / expected['matches'])}% {expected['matches']} ")
        pairs = cell.find("span", class_="pairs")[0]
        counted = _pairs_from_rows(db, int(cell.attrs["data-row"]), int(cell.attrs["data-col"]))
        assert (int(pairs.attrs["data-won"]), int(pairs.attrs["data-split"]), int(pairs.attrs["data-lost"])) == counted
        assert pairs.text.startswith("{}/{}/{} · Elo ".format(*counted)) and " · LOS " in pairs.text


def _pairs_from_rows(db: dict, row: int, col: int) -> tuple[int, int, int]:
    """(2-0, 1-1, 0-2) pairs of entrant ``row`` against ``col``, counted from the match rows."""
    wins: dict[int, list[int]] = {}
    for m in db["matches"]:
        if {m["seat0"], m["seat1"]} == {row, col} and not m["void"] and m["winner_seat"] is not None:
            wins.setdefault(m["pair_index"], []).append(int((m["seat0"], m["seat1"])[m["winner_seat"]] == row))
    outcomes = Counter(sum(w) for w in wins.values() if len(w) == 2)
    return outcomes[2], outcomes[1], outcomes[0]


def _behaviour_from_records(db: dict) -> dict[int, Counter]:
    """Behaviour counts computed independently of the report: step through each record by hand."""
    counts: dict[int, Counter] = {e: Counter() for e in range(len(db["labels"]))}
    for row in db["hands"]:
        record = json.loads(row["record_json"])
        entrants = (row["seat0"], row["seat1"])
        hand = Hand.deal(record["deck"], record["dealer"], Rules(**record["rules"]))
        for action in record["actions"]:
            me = entrants[hand.to_move]
            if action == "close":
                counts[me]["closes"] += 1
                counts[me]["closes_won"] += row["winner_seat"] is not None and entrants[row["winner_seat"]] == me
            elif action.startswith("meld"):
                counts[me]["marriages"] += 1
                counts[me]["trump_marriages"] += action[-1] == hand.view(0)["trump"]
            elif action == "exchange":
                counts[me]["exchanges"] += 1
            elif action == "declare":
                counts[me]["declarations"] += 1
            hand.apply(action)
        assert hand.result is not None and hand.result.game_points == row["game_points"]
        for seat in (0, 1):
            counts[entrants[seat]]["hands"] += 1
        if row["winner_seat"] is not None:
            winner = entrants[row["winner_seat"]]
            counts[winner][f"won{row['game_points']}"] += 1
            counts[winner]["hands_won"] += 1
            if row["reason"] == "false_declaration":
                counts[entrants[1 - row["winner_seat"]]]["false"] += 1
    return counts


def test_bot_pages_match_the_store(site_dir: Path, board: Leaderboard, db: dict) -> None:
    behaviour = _behaviour_from_records(db)
    standings = {s.entrant: s for s in board.standings}
    assert sum(c["closes"] for c in behaviour.values()) > 0 and sum(c["declarations"] for c in behaviour.values()) > 0
    for entrant, label in enumerate(db["labels"]):
        doc = page(site_dir, f"bots/{entrant}.html")
        assert doc.by_id("bot-label").text == label
        bot = db["bots"][entrant]
        assert f"{bot.name} {bot.version} · fingerprint {bot.fingerprint[:12]}" in doc.find("p", class_="hint")[0].text
        s = standings[entrant]
        assert doc.by_id("stat-rank").text == str(s.rank)
        assert doc.by_id("stat-wl").text == f"{s.wins}-{s.losses}"
        assert doc.by_id("stat-faults").text == str(s.faults)
        think = {td.attrs["data-key"]: td.text for td in doc.by_id("think").iter("td")}
        ms = lambda v: "—" if v is None else f"{v:.3f}"  # noqa: E731
        assert think == {"p50": ms(s.think_p50_ms), "p99": ms(s.think_p99_ms), "max": ms(s.think_max_ms),
                         "cpu_p50": ms(s.cpu_p50_ms), "cpu_p99": ms(s.cpu_p99_ms), "cpu_max": ms(s.cpu_max_ms)}
        if hierarchy() is not None and s.think_p50_ms is not None:  # CPU time is measured under cgroups
            assert s.cpu_p50_ms is not None and s.cpu_max_ms is not None

        # results by opponent, straight from the matches table
        expected = {}
        for m in db["matches"]:
            seats = (m["seat0"], m["seat1"])
            if entrant not in seats:
                continue
            me = seats.index(entrant)
            line = expected.setdefault(db["labels"][seats[1 - me]], [0, 0, 0])
            line[0] += 1
            line[1] += m["winner_seat"] == me
            line[2] += m["winner_seat"] == 1 - me
        rows = {r[0]: [int(r[1]), int(r[2]), int(r[3])] for r in table_rows(doc.by_id("opponents"))}
        assert rows == expected
        assert all(board.crosstable[label][o][k] == v for o, (n, w, _) in rows.items()
                   for k, v in (("matches", n), ("wins", w)))

        got = {td.attrs["data-key"]: td.text for td in doc.by_id("behaviour").iter("td")}
        c = behaviour[entrant]
        closes_won = f"{c['closes_won']}" + (f" ({100 * c['closes_won'] / c['closes']:.1f}%)" if c["closes"] else "")
        assert got == {
            "hands": f"{c['hands']} / {c['hands_won']}",
            "closes": str(c["closes"]),
            "closes_won": closes_won,
            "marriages": f"{c['marriages']} ({c['trump_marriages']})",
            "exchanges": str(c["exchanges"]),
            "declarations": str(c["declarations"]),
            "false_declarations": str(c["false"]),
            "wins_by_points": f"{c['won1']} / {c['won2']} / {c['won3']}",
        }

        faults = [f for f in db["faults"] if f["entrant"] == entrant]
        items = doc.find("li", class_="fault")
        assert len(items) == len(faults)
        for item, fault in zip(items, faults):
            assert fault["detail"] in item.text and fault["kind"] in item.text
            link = item.iter("a")[0].attrs["href"]
            hand_index = fault["record"]["hand_index"]
            assert link == f"../matches/{fault['match_id']}.html#h{hand_index + 1}"
            assert hand_index < len(replay_data(site_dir, fault["match_id"])["hands"])
            assert json.loads(item.iter("pre")[0].text) == fault["record"]
        listed = {a.attrs["href"] for a in doc.find("a", class_="replay-link")}
        mine = {f"../matches/{m['match_id']}.html" for m in db["matches"] if entrant in (m["seat0"], m["seat1"])}
        assert listed == mine


def test_every_match_has_a_replay_of_its_stored_hands(site_dir: Path, db: dict) -> None:
    listed = {a.attrs["href"] for a in page(site_dir, "matches.html").find("a", class_="replay-link")}
    assert listed == {f"matches/{m['match_id']}.html" for m in db["matches"]}
    hands_by_match: dict[str, list[dict]] = {}
    for row in db["hands"]:
        hands_by_match.setdefault(row["match_id"], []).append(row)
    fault_matches = {f["match_id"] for f in db["faults"]}
    for match in db["matches"]:
        data = replay_data(site_dir, match["match_id"])
        stored = hands_by_match.get(match["match_id"], [])
        assert data["names"] == [db["labels"][match["seat0"]], db["labels"][match["seat1"]]]
        assert len(data["hands"]) == len(stored) + (match["match_id"] in fault_matches)
        for shown, row in zip(data["hands"], stored):
            record = json.loads(row["record_json"])
            assert len(shown["steps"]) == len(record["actions"]) + 1
            hand = Hand.deal(record["deck"], record["dealer"], Rules(**record["rules"]))
            for step, action in zip(shown["steps"][1:], record["actions"]):
                hand.apply(action)
                assert step["action"] == action
                assert step["hands"] == [hand.view(0)["hand"], hand.view(1)["hand"]]
                assert step["totals"] == hand.view(0)["totals"]
            result = shown["steps"][-1]["result"]
            assert (result["winner"], result["game_points"], result["reason"], result["totals"], result["tricks"]) == (
                row["winner_seat"], row["game_points"], row["reason"], [row["total0"], row["total1"]],
                [row["tricks0"], row["tricks1"]])
        if stored and not match["forfeit"]:
            assert data["hands"][len(stored) - 1]["score_after"] == [match["score0"], match["score1"]]
        if match["match_id"] in fault_matches:
            assert data["hands"][-1]["interrupted"]


def test_the_untrusted_label_is_text_on_every_page(site_dir: Path) -> None:
    pages = sorted(site_dir.rglob("*.html"))
    assert len(pages) == 3 + 4 + 12
    for path in pages:
        html = path.read_text(encoding="utf-8")
        assert XSS_LABEL not in html, path
        if path.name in ("index.html", "crosstable.html", "matches.html", "0.html", "p00000h0.html"):
            assert ESCAPED_LABEL in html, path
        scripts = parse(html).iter("script")
        assert [s.attrs.get("src", s.attrs.get("type")) for s in scripts if "src" in s.attrs] == [
            ("../" if path.parent.name in ("bots", "matches") else "") + "static/report.js"], path
        assert all("src" in s.attrs or s.attrs.get("type") == "application/json" for s in scripts), path


def test_the_site_needs_no_network(site_dir: Path) -> None:
    for path in site_dir.rglob("*.html"):
        doc = parse(path.read_text(encoding="utf-8"))
        for node in doc.iter():
            for attr in ("href", "src"):
                ref = node.attrs.get(attr)
                if ref is None or ref.startswith("#") or ref == "data:,":
                    continue
                assert "//" not in ref, f"{path}: {ref}"
                target = (path.parent / ref.split("#")[0]).resolve()
                assert target.is_file(), f"{path}: {ref} does not exist"


def test_report_and_serve_refuse_folders_without_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path)]) == 2
    assert "no results database here" in capsys.readouterr().err
    assert main(["serve", str(tmp_path / "missing")]) == 2
    assert "no such folder" in capsys.readouterr().err
