"""The report's pages: Jinja2 templates (autoescaped: bot names are untrusted) over ``ReportData``.

``Site.render(path)`` gives one page; ``write_report`` writes them all as a static site and
``results.report.serve`` serves the same renderings live. Every asset is bundled: the
stylesheet and the script are package data, and the rating chart is inline SVG computed here.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from importlib import resources
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from ..errors import StoreError
from ..leaderboard import elo_text
from ..pairgames import pair_games
from ..sprt import SprtTracker
from ..store import DB_NAME, Store
from .model import REASON_TEXT, ReportData, load_report_data, pretty

STATIC_FILES = ("report.css", "report.js")
CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8",
                 ".js": "text/javascript; charset=utf-8", ".json": "application/json"}
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
           "#7f7f7f", "#bcbd22")
_SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_CHART_POINTS = 400


def _num(value: float | None, digits: int) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def make_environment() -> Environment:
    """The Jinja2 environment: package templates, autoescape on, undefined names are errors."""
    env = Environment(loader=PackageLoader("results.report", "templates"), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["f1"] = lambda v: _num(v, 1)
    env.filters["f2"] = lambda v: _num(v, 2)
    env.filters["f3"] = lambda v: _num(v, 3)
    env.filters["card"] = pretty
    env.filters["reason"] = lambda r: REASON_TEXT.get(r, r)
    env.filters["pretty_json"] = lambda v: json.dumps(v, indent=2, ensure_ascii=False)
    return env


def colour(entrant: int) -> str:
    """A line colour per entrant (the palette, then golden-angle hues)."""
    if entrant < len(PALETTE):
        return PALETTE[entrant]
    return f"hsl({(entrant * 137.508) % 360:.0f}, 60%, 45%)"


def score_colour(pct: float) -> str:
    """Red (0 %) through yellow to green (100 %), light enough for dark text."""
    return f"hsl({1.2 * pct:.0f}, 70%, 80%)"


def match_path(match: dict[str, Any]) -> str:
    """The replay page of a match (the id is ours, but checked before it becomes a file name)."""
    name = match["match_id"] if _SAFE_ID.fullmatch(match["match_id"]) else f"m{match['id']}"
    return f"matches/{name}.html"


def rating_chart(data: ReportData, width: int = 1100, height: int = 360) -> dict[str, Any]:
    """Inline-SVG geometry of each entrant's mu and mu ± 3 sigma after each rated pair."""
    left, right, top, bottom = 48, 12, 10, 30
    n = len(data.entrants)
    points: list[tuple[int, dict[int, tuple[float, float]]]] = [
        (0, {e: data.initial for e in range(n)}),
        *[(after + 1, ratings) for after, ratings in data.snapshots],
    ]
    if len(points) > MAX_CHART_POINTS:
        stride = -(-len(points) // MAX_CHART_POINTS)
        points = points[::stride] + ([points[-1]] if (len(points) - 1) % stride else [])
    lows = [mu - 3 * sigma for _, ratings in points for mu, sigma in ratings.values()]
    highs = [mu + 3 * sigma for _, ratings in points for mu, sigma in ratings.values()]
    y_lo, y_hi = min(lows, default=0.0), max(highs, default=50.0)
    if y_hi - y_lo < 1e-9:
        y_lo, y_hi = y_lo - 1, y_hi + 1
    x_hi = max(points[-1][0], 1)
    plot_w, plot_h = width - left - right, height - top - bottom

    def sx(x: float) -> float:
        return round(left + plot_w * x / x_hi, 1)

    def sy(y: float) -> float:
        return round(top + plot_h * (y_hi - y) / (y_hi - y_lo), 1)

    series = []
    for e in range(n):
        pts = [(x, ratings[e]) for x, ratings in points if e in ratings]
        line = " ".join(f"{'M' if i == 0 else 'L'}{sx(x)},{sy(mu)}" for i, (x, (mu, _)) in enumerate(pts))
        upper = [f"{sx(x)},{sy(mu + 3 * s)}" for x, (mu, s) in pts]
        lower = [f"{sx(x)},{sy(mu - 3 * s)}" for x, (mu, s) in reversed(pts)]
        edges = ("M" + " L".join(upper), "M" + " L".join(reversed(lower)))
        last_x, (last_mu, last_sigma) = pts[-1]
        series.append({
            "entrant": e, "label": data.labels[e], "colour": colour(e), "line": line,
            "band": "M" + " L".join(upper + lower) + " Z", "edges": edges,
            "end": (sx(last_x), sy(last_mu)), "mu": last_mu, "sigma": last_sigma,
        })
    step = _nice_step((y_hi - y_lo) / 5)
    first = step * -(-y_lo // step)
    y_ticks = []
    value = first
    while value <= y_hi + 1e-9:
        y_ticks.append({"y": sy(value), "label": f"{round(value, 9) + 0.0:g}"})
        value += step
    x_step = max(1, int(_nice_step(x_hi / 8)))
    x_ticks = [{"x": sx(x), "label": str(x)} for x in range(0, x_hi + 1, x_step)]
    return {"width": width, "height": height, "left": left, "right": width - right, "top": top,
            "bottom": height - bottom, "series": series, "y_ticks": y_ticks, "x_ticks": x_ticks,
            "pairs": points[-1][0]}


def _nice_step(raw: float) -> float:
    if raw <= 0:
        return 1.0
    magnitude = 10 ** int(f"{raw:e}".split("e")[1])
    for factor in (1, 2, 5, 10):
        if raw <= factor * magnitude:
            return float(factor * magnitude)
    return float(10 * magnitude)


def sprt_chart(data: ReportData, width: int = 1100, height: int = 320) -> dict[str, Any] | None:
    """The LLR path of an ``arena sprt`` run against its bounds, as inline-SVG geometry (None
    for a tournament without a stopping rule)."""
    settings = data.tournament.settings
    if settings.sprt is None:
        return None
    tracker = SprtTracker(**asdict(settings.sprt), max_pairs=settings.pairs_per_pairing)
    status = tracker.update(pair_games(m["row"] for m in data.matches))
    path = [0.0, *tracker.path]
    left, right, top, bottom = 48, 12, 10, 30
    y_lo, y_hi = min(status.lower, *path) - 0.3, max(status.upper, *path) + 0.3
    x_hi = max(len(path) - 1, 1)

    def sx(x: float) -> float:
        return round(left + (width - left - right) * x / x_hi, 1)

    def sy(y: float) -> float:
        return round(top + (height - top - bottom) * (y_hi - y) / (y_hi - y_lo), 1)

    x_step = max(1, int(_nice_step(x_hi / 8)))
    return {"width": width, "height": height, "left": left, "right": width - right, "top": top,
            "bottom": height - bottom, "status": status, "rule": settings.sprt,
            "line": " ".join(f"{'M' if i == 0 else 'L'}{sx(i)},{sy(v)}" for i, v in enumerate(path)),
            "upper": sy(status.upper), "lower": sy(status.lower), "zero": sy(0.0), "points": len(path) - 1,
            "x_ticks": [{"x": sx(x), "label": str(x)} for x in range(0, x_hi + 1, x_step)]}


class Site:
    """Every page of one report, rendered on demand from one ``ReportData``."""

    def __init__(self, data: ReportData, *, live: bool = False, env: Environment | None = None) -> None:
        self.data = data
        self.live = live
        self.env = env or make_environment()
        self._matches = {match_path(m): m for m in data.matches}
        self._bots = {f"bots/{e}.html": e for e in range(len(data.entrants))}
        self.sprt = sprt_chart(data)

    def paths(self) -> list[str]:
        """Every file of the site, relative to its root."""
        return ["index.html", "crosstable.html", "matches.html", "status.json", *(["sprt.html"] if self.sprt else []),
                *self._bots, *self._matches, *(f"static/{name}" for name in STATIC_FILES)]

    def status(self) -> dict[str, Any]:
        """What the live pages poll: changes whenever a pair is stored."""
        return {"version": self.data.version, "pairs_done": self.data.board.pairs_done,
                "pairs_total": self.data.board.pairs_total, "matches": len(self.data.matches),
                "finished": self.data.tournament.finished_at is not None}

    def render(self, path: str) -> tuple[bytes, str] | None:
        """The bytes and content type of ``path``, or None if the site has no such file."""
        suffix = Path(path).suffix
        kind = CONTENT_TYPES.get(suffix, "application/octet-stream")
        if path.startswith("static/") and path[7:] in STATIC_FILES:
            return static_file(path[7:]), kind
        if path == "status.json":
            return json.dumps(self.status()).encode(), kind
        if path == "index.html":
            return self._page("index.html.j2", "", chart=rating_chart(self.data), bars=self._bars(),
                              rank_bars=self._rank_bars(), score_colour=score_colour,
                              entrant_of={s.bot: s.entrant for s in self.data.board.standings}), kind
        if path == "crosstable.html":
            return self._page("crosstable.html.j2", "", score_colour=score_colour, elo_text=elo_text), kind
        if path == "matches.html":
            return self._page("matches.html.j2", ""), kind
        if path == "sprt.html" and self.sprt:
            return self._page("sprt.html.j2", "", chart=self.sprt, elo_text=elo_text), kind
        if path in self._bots:
            return self._bot_page(self._bots[path]), kind
        if path in self._matches:
            match = self._matches[path]
            return self._page("match.html.j2", "../", match=match, replay=self.data.replay(match)), kind
        return None

    def _page(self, template: str, root: str, **context: Any) -> bytes:
        data = self.data
        standings = {s.entrant: s for s in data.board.standings}
        html = self.env.get_template(template).render(
            root=root, live=self.live, data=data, board=data.board, standings=standings, labels=data.labels,
            has_sprt=self.sprt is not None,
            tournament=data.tournament, match_path=match_path, colour=colour, **context,
        )
        return html.encode("utf-8")

    def _bars(self) -> dict[int, dict[str, float]]:
        """Leaderboard interval bars: mu - 3 sigma .. mu + 3 sigma on a common scale, in percent."""
        standings = self.data.board.standings
        lo = min((s.mu - 3 * s.sigma for s in standings), default=0.0)
        hi = max((s.mu + 3 * s.sigma for s in standings), default=1.0)
        span = (hi - lo) or 1.0
        return {s.entrant: {"left": round(100 * (s.mu - 3 * s.sigma - lo) / span, 2),
                            "width": round(100 * 6 * s.sigma / span, 2),
                            "mu": round(100 * (s.mu - lo) / span, 2)} for s in standings}

    def _rank_bars(self) -> dict[int, dict[str, float]]:
        """Rank-interval bars on the scale 1 .. number of bots, in percent."""
        n = len(self.data.board.standings) or 1
        return {s.entrant: {"left": round(100 * (s.bt.rank_ci95[0] - 1) / n, 2),
                            "width": round(100 * (s.bt.rank_ci95[1] - s.bt.rank_ci95[0] + 1) / n, 2)}
                for s in self.data.board.standings}

    def _bot_page(self, entrant: int) -> bytes:
        data = self.data
        matches = [m for m in data.matches if entrant in m["seats"]]
        faults = [f for f in data.faults if f.entrant == entrant]
        return self._page("bot.html.j2", "../", entrant=entrant, entrant_row=data.entrants[entrant],
                          matches=matches, faults=faults, opponents=data.opponents[entrant],
                          behaviour=data.behaviour[entrant], decisions=data.decisions.get(entrant, 0),
                          fault_match={m["id"]: m for m in matches})


def static_file(name: str) -> bytes:
    """A bundled asset."""
    return resources.files("results.report").joinpath("static", name).read_bytes()


def load_site(folder: Path, *, live: bool = False) -> Site:
    """Read the results in ``folder`` (a tournament output folder) into a Site."""
    with Store(Path(folder) / DB_NAME, readonly=True) as store:
        return Site(load_report_data(store), live=live)


def write_report(folder: Path, out: Path | None = None) -> tuple[Path, int]:
    """Write the static report of ``folder`` into ``out`` (default ``folder/report``); returns (out, files)."""
    folder = Path(folder)
    out = Path(out) if out is not None else folder / "report"
    if out.exists() and not out.is_dir():
        raise StoreError(f"{out}: is a file, not a folder for the report")
    site = load_site(folder)
    count = 0
    for path in site.paths():
        rendered = site.render(path)
        assert rendered is not None, path
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(rendered[0])
        count += 1
    return out, count
