"""What the server shows, as HTML pages and JSON: the live leaderboard, bot pages, matches with
replays (public links), and a bot's own stderr logs and code (its owner and the organiser only).

Public views show results only: a match's faults carry their kind and the arena's one-line
detail, never the bot's stderr tail, which only its owner may read.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from arena.server.archive import pack
from arena.server.auth import HTTPError, current_user, db_of, require_owner_or_organiser
from arena.server.db import Bot, ServerDB
from arena.server.settle import settle_json
from arena.server.standings import Board, BoardCache, LADDER_DIR, label_of, ladder_path
from arena.server.validator import VALIDATION_LOGS
from arena.server.web import page
from results.report.model import match_replay
from results.rows import MatchRow
from results.store import Store

RECENT_MATCHES = 50
LOG_FILES = 20
LOG_TAIL_BYTES = 64 * 1024
_MKDTEMP_SUFFIX = 9  # "-" and the 8 random characters tempfile.mkdtemp adds to a bot's launch folder


def board_of(request: Request) -> Board:
    """The current leaderboard."""
    boards: BoardCache = request.app.state.boards
    return boards.board(db_of(request))


@contextmanager
def ladder_store(request: Request) -> Iterator[Store | None]:
    """The ladder's results store, read-only (None before the ladder made it and its tournament)."""
    path = ladder_path(db_of(request).folder)
    if not path.exists():
        yield None
        return
    with Store(path, readonly=True, check_integrity=False) as store:
        yield store if store.has_tournament() else None


def _bot(request: Request) -> Bot:
    bot = db_of(request).bot(request.path_params["bot"])
    if bot is None:
        raise HTTPError(404, f"no bot named {request.path_params['bot']!r}")
    return bot


# ---------------------------------------------------------------------- the leaderboard


def leaderboard_json(request: Request) -> dict[str, Any]:
    """The leaderboard's API form."""
    db = db_of(request)
    board = board_of(request)
    return {"bots": [line.to_dict() for line in board.lines],
            "disabled": [{"bot": bot, "owner": owner, "reason": reason} for bot, owner, reason in board.disabled],
            "pairs": board.pairs_done, "paused": bool(db.get_state("paused", False)),
            "frozen": bool(db.get_state("frozen", False))}


def api_leaderboard(request: Request) -> Response:
    """``GET /api/leaderboard``: public, ``{"bots": [{"bot", "owner", "version", "mu", "sigma", "matches", "bt"}]}``."""
    return JSONResponse(leaderboard_json(request))


def leaderboard_page(request: Request) -> Response:
    """The front page: the live leaderboard (it refreshes itself from the API)."""
    return page(request, "leaderboard.html.j2", board=leaderboard_json(request))


# ---------------------------------------------------------------------- matches


def _labels(store: Store, tid: int) -> dict[int, str]:
    return {e.number: e.bot.label for e in store.entrants(tid)}


def _match_line(row: MatchRow, labels: dict[int, str]) -> dict[str, Any]:
    names = [labels[row.seat0], labels[row.seat1]]
    winner = None if row.winner_seat is None or row.void else names[row.winner_seat]
    return {"match_id": row.match_id, "names": names, "winner": winner, "score": [row.score0, row.score1],
            "forfeit": row.forfeit, "void": row.void, "hands": row.hands, "url": f"/matches/{row.match_id}"}


def recent_matches(request: Request, bot: str | None = None, limit: int = RECENT_MATCHES) -> list[dict[str, Any]]:
    """The newest stored matches, all or one bot's (any version), newest first."""
    with ladder_store(request) as store:
        if store is None:
            return []
        tid = store.tournament().id
        labels = _labels(store, tid)
        mine = None
        if bot is not None:
            mine = [e.number for e in store.entrants(tid) if e.bot.name.lower() == bot.lower()]
            if not mine:
                return []
        return [_match_line(row, labels) for row in store.latest_matches(tid, limit, mine)]


def match_json(request: Request) -> dict[str, Any]:
    """One match with its faults (kind and detail only) and the replay of its hands."""
    match_id = request.path_params["match_id"]
    with ladder_store(request) as store:
        tid = store.tournament().id if store is not None else 0
        row = store.match_by_id(tid, match_id) if store is not None else None
        if store is None or row is None:
            raise HTTPError(404, f"no match {match_id!r}")
        labels = _labels(store, tid)
        faults = store.faults(tid, row.id)
        fault_hands = {f.hand_index for f in faults if f.hand_index is not None}
        line = _match_line(row, labels)
        replay = match_replay(row, store.hands(row.id), (line["names"][0], line["names"][1]), fault_hands)
    line["faults"] = [{"kind": f.kind, "seat": f.seat, "detail": f.detail} for f in faults]
    line["replay"] = replay
    return line


def api_matches(request: Request) -> Response:
    """``GET /api/matches[?bot=NAME]``: the newest matches, public."""
    return JSONResponse({"matches": recent_matches(request, request.query_params.get("bot"))})


def api_match(request: Request) -> Response:
    """``GET /api/matches/{match_id}``: one match and its replay, public."""
    return JSONResponse(match_json(request))


def matches_page(request: Request) -> Response:
    """The newest matches."""
    return page(request, "matches.html.j2", matches=recent_matches(request))


def match_page(request: Request) -> Response:
    """A match's replay page (a public link)."""
    match = match_json(request)
    return page(request, "match.html.j2", match=match, replay=match["replay"])


# ---------------------------------------------------------------------- bots


def bot_json(request: Request) -> dict[str, Any]:
    """A bot's public page: owner, state, its accepted versions with their ratings, recent matches."""
    bot = _bot(request)
    db = db_of(request)
    board = board_of(request)
    with ladder_store(request) as store:
        entrants = {e.bot.label: e.number for e in store.entrants(store.tournament().id)} if store else {}
    versions = []
    for sub in db.submissions(bot_id=bot.id):
        if sub.status != "accepted":
            continue  # a rejected or waiting upload is its owner's business
        entrant = entrants.get(label_of(sub.bot, sub.version))
        rating = board.ratings.get(entrant) if entrant is not None else None
        mu, sigma = (rating.mu, rating.sigma) if rating is not None else (None, None)
        versions.append({"version": sub.version, "accepted_at": sub.finished_at, "mu": mu, "sigma": sigma})
    current = next((line.to_dict() for line in board.lines if line.bot == bot.name), None)
    return {"bot": bot.name, "owner": bot.owner, "disabled": bot.disabled_reason, "current": current,
            "versions": versions, "matches": recent_matches(request, bot.name)}


def api_bot(request: Request) -> Response:
    """``GET /api/bots/{bot}``: public."""
    return JSONResponse(bot_json(request))


def bot_page(request: Request) -> Response:
    """A bot's page."""
    return page(request, "bot.html.j2", bot=bot_json(request))


def bot_logs(db: ServerDB, bot: Bot) -> list[dict[str, Any]]:
    """The newest stderr logs of ``bot``'s processes: ladder games and validations, newest first."""
    found: list[tuple[str, Path]] = []
    launches = db.folder / LADDER_DIR / "logs"
    if launches.is_dir():
        found += [("ladder", d) for d in launches.iterdir() if _launch_of(d, bot.name)]
    for sub in db.submissions(bot_id=bot.id):
        folder = db.folder / "submissions" / str(sub.id) / VALIDATION_LOGS
        if folder.is_dir():
            found += [(f"validation of version {sub.version}", d) for d in folder.iterdir() if _launch_of(d, bot.name)]
    logs = []
    for source, launch in found:
        stderr = launch / "stderr.log"
        if stderr.is_file() and not stderr.is_symlink():
            logs.append((stderr.stat().st_mtime, source, launch.name, stderr))
    logs.sort(reverse=True)
    return [{"source": source, "name": name, "bytes": path.stat().st_size, "tail": _tail(path)}
            for _, source, name, path in logs[:LOG_FILES]]


def _launch_of(folder: Path, bot: str) -> bool:
    """Whether a launch folder (``<bot>-xxxxxxxx``) is one of ``bot``'s processes'."""
    name = folder.name
    return (folder.is_dir() and len(name) == len(bot) + _MKDTEMP_SUFFIX and name[-_MKDTEMP_SUFFIX] == "-"
            and name[:-_MKDTEMP_SUFFIX].lower() == bot.lower())


def _tail(path: Path) -> str:
    with path.open("rb") as fh:
        size = fh.seek(0, 2)
        fh.seek(max(0, size - LOG_TAIL_BYTES))
        return fh.read().decode("utf-8", "replace")


def _owned_bot(request: Request, what: str) -> Bot:
    bot = _bot(request)
    require_owner_or_organiser(current_user(request), bot.owner_id, what)
    return bot


def api_logs(request: Request) -> Response:
    """``GET /api/bots/{bot}/logs``: its owner or the organiser only."""
    bot = _owned_bot(request, "a bot's logs")
    return JSONResponse({"bot": bot.name, "logs": bot_logs(db_of(request), bot)})


def logs_page(request: Request) -> Response:
    """A bot's logs page: its owner or the organiser only."""
    bot = _owned_bot(request, "a bot's logs")
    return page(request, "logs.html.j2", bot=bot, logs=bot_logs(db_of(request), bot))


def api_code(request: Request) -> Response:
    """``GET /api/bots/{bot}/code``: the newest accepted version's files as a .tar.gz (owner or organiser)."""
    bot = _owned_bot(request, "a bot's code")
    accepted = [s for s in db_of(request).submissions(bot_id=bot.id) if s.status == "accepted"]
    if not accepted:
        raise HTTPError(404, f"{bot.name} has no accepted version")
    data = pack(db_of(request).folder / accepted[0].bot_path, lambda part: part == "__pycache__")
    return Response(data, media_type="application/gzip", headers={
        "content-disposition": f'attachment; filename="{bot.name}-v{accepted[0].version}.tar.gz"'})


def api_settle(request: Request) -> Response:
    """``GET /api/settle``: the settle phase and its (official, once done) standings; public."""
    return JSONResponse({"settle": settle_json(db_of(request))})


def settle_page(request: Request) -> Response:
    """The settle phase's standings."""
    return page(request, "settle.html.j2", settle=settle_json(db_of(request)))


ROUTES = [
    Route("/", leaderboard_page, methods=["GET"]),
    Route("/api/leaderboard", api_leaderboard, methods=["GET"]),
    Route("/api/matches", api_matches, methods=["GET"]),
    Route("/api/matches/{match_id}", api_match, methods=["GET"]),
    Route("/matches", matches_page, methods=["GET"]),
    Route("/matches/{match_id}", match_page, methods=["GET"]),
    Route("/api/bots/{bot}", api_bot, methods=["GET"]),
    Route("/bots/{bot}", bot_page, methods=["GET"]),
    Route("/api/bots/{bot}/logs", api_logs, methods=["GET"]),
    Route("/bots/{bot}/logs", logs_page, methods=["GET"]),
    Route("/api/bots/{bot}/code", api_code, methods=["GET"]),
    Route("/api/settle", api_settle, methods=["GET"]),
    Route("/settle", settle_page, methods=["GET"]),
]
