// The live leaderboard: re-reads /api/leaderboard every two seconds and redraws the table.
(function () {
  "use strict";
  function cell(text, cls) {
    const td = document.createElement("td");
    if (cls) td.className = cls;
    td.textContent = text;
    return td;
  }
  function row(b) {
    const tr = document.createElement("tr");
    tr.dataset.bot = b.bot;
    tr.appendChild(cell(String(b.rank), "num"));
    const name = cell("", "");
    const link = document.createElement("a");
    link.href = "/bots/" + encodeURIComponent(b.bot);
    link.textContent = b.bot;
    name.appendChild(link);
    tr.appendChild(name);
    tr.appendChild(cell(b.owner, ""));
    tr.appendChild(cell(String(b.version), "num"));
    tr.appendChild(cell(b.conservative.toFixed(2), "num"));
    tr.appendChild(cell(b.mu.toFixed(2), "num"));
    tr.appendChild(cell(b.sigma.toFixed(2), "num"));
    tr.appendChild(cell(b.bt ? b.bt.elo.toFixed(0) + " (" + b.bt.elo_ci95[0].toFixed(0) + ".." +
                        b.bt.elo_ci95[1].toFixed(0) + ")" : "", "num"));
    tr.appendChild(cell(String(b.matches), "num matches"));
    tr.appendChild(cell(b.wins + "\u2013" + b.losses, "num"));
    return tr;
  }
  function draw(board) {
    const body = document.querySelector("#leaderboard tbody");
    body.replaceChildren.apply(body, board.bots.map(row));
    const pairs = document.getElementById("pairs");
    pairs.textContent = String(board.pairs);
    pairs.dataset.pairs = String(board.pairs);
    document.getElementById("paused").hidden = !board.paused;
    document.getElementById("frozen").hidden = !board.frozen;
    const list = document.getElementById("disabled");
    list.replaceChildren.apply(list, board.disabled.map(function (d) {
      const li = document.createElement("li");
      li.dataset.bot = d.bot;
      li.textContent = d.bot + " (" + d.owner + "): " + d.reason;
      return li;
    }));
    document.getElementById("disabled-section").hidden = board.disabled.length === 0;
  }
  function refresh() {
    fetch("/api/leaderboard", {credentials: "same-origin"})
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (board) { if (board) draw(board); })
      .catch(function () {})
      .finally(function () { setTimeout(refresh, 2000); });
  }
  setTimeout(refresh, 2000);
})();
