"""What everyone may watch: the live leaderboard (JSON and HTML)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from arena.server.auth import db_of
from arena.server.standings import Board, BoardCache


def board_of(request: Request) -> Board:
    """The current leaderboard."""
    boards: BoardCache = request.app.state.boards
    return boards.board(db_of(request))


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


ROUTES = [
    Route("/api/leaderboard", api_leaderboard, methods=["GET"]),
]
