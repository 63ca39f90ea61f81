// Sixty-Six Arena report: sortable tables, the hand replay and live refresh.
// No dependencies. Untrusted text (bot names, log lines) only ever goes through textContent.
"use strict";

(function () {
  const SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function pretty(card) {
    return (card[0] === "T" ? "10" : card[0]) + SUITS[card[1]];
  }

  function cardEl(card, extra) {
    const node = el("span", "card suit-" + card[1] + (extra ? " " + extra : ""), pretty(card));
    node.dataset.card = card;
    return node;
  }

  // ------------------------------------------------------------------ sortable tables

  function cellValue(row, index, numeric) {
    const cell = row.cells[index];
    if (!cell) return numeric ? NaN : "";
    const raw = cell.dataset.value !== undefined ? cell.dataset.value : cell.textContent.trim();
    return numeric ? parseFloat(raw) : raw.toLowerCase();
  }

  function sortTable(table, th) {
    const index = Array.prototype.indexOf.call(th.parentNode.cells, th);
    const numeric = th.dataset.type === "num";
    const current = th.getAttribute("aria-sort");
    const direction = current ? (current === "ascending" ? "descending" : "ascending")
                              : (th.dataset.first || "ascending");
    const sign = direction === "ascending" ? 1 : -1;
    const body = table.tBodies[0];
    const rows = Array.prototype.slice.call(body.rows);
    rows.forEach(function (row, i) { row.dataset.order = i; });
    rows.sort(function (a, b) {
      const x = cellValue(a, index, numeric), y = cellValue(b, index, numeric);
      let c;
      if (numeric) {
        if (isNaN(x) && isNaN(y)) c = 0; else if (isNaN(x)) return 1; else if (isNaN(y)) return -1; else c = x - y;
      } else {
        c = x < y ? -1 : x > y ? 1 : 0;
      }
      return c * sign || (a.dataset.order - b.dataset.order);
    });
    rows.forEach(function (row) { body.appendChild(row); });
    Array.prototype.forEach.call(th.parentNode.cells, function (other) { other.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", direction);
  }

  function initSortable() {
    document.querySelectorAll("table.sortable").forEach(function (table) {
      if (!table.tHead) return;
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
        if (th.dataset.sort === "none") return;
        th.tabIndex = 0;
        th.addEventListener("click", function () { sortTable(table, th); });
        th.addEventListener("keydown", function (event) {
          if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sortTable(table, th); }
        });
      });
    });
  }

  // ------------------------------------------------------------------ hand replay

  function initReplay() {
    const source = document.getElementById("replay-data");
    if (!source) return;
    const data = JSON.parse(source.textContent);
    const names = data.names;
    const hands = data.hands;
    const state = { hand: 0, step: 0 };
    const $ = function (id) { return document.getElementById(id); };
    const log = $("log");

    function parseHash() {
      const m = /^#h(\d+)(?:s(\d+))?$/.exec(location.hash);
      if (!m) return null;
      const hand = Math.min(Math.max(parseInt(m[1], 10) - 1, 0), hands.length - 1);
      const step = m[2] === undefined ? 0 : Math.min(parseInt(m[2], 10), hands[hand].steps.length - 1);
      return { hand: hand, step: step };
    }

    function buildLog(hand) {
      log.textContent = "";
      hand.steps.forEach(function (step, i) {
        step.log.forEach(function (line) {
          const item = el("li", null, line);
          item.dataset.step = i;
          log.appendChild(item);
        });
      });
      document.querySelectorAll("#hand-list .hand-tab").forEach(function (tab) {
        tab.classList.toggle("active", Number(tab.dataset.hand) === state.hand);
      });
    }

    function renderSeat(seat, step, hand) {
      const box = $("seat-" + seat);
      const cards = box.querySelector(".hand");
      cards.textContent = "";
      step.hands[seat].forEach(function (card) {
        cards.appendChild(cardEl(card, card[1] === hand.trump ? "trump" : ""));
      });
      const roles = [];
      if (hand.dealer === seat) roles.push("dealer");
      if (step.closed && step.closer === seat) roles.push("closed the stock");
      if (step.to_move === seat) roles.push("to move");
      box.querySelector(".role").textContent = roles.join(" · ");
      box.classList.toggle("to-move", step.to_move === seat);
      box.querySelector(".score-line").textContent =
        "total " + step.totals[seat] + " · " + step.tricks_won[seat] + " trick" +
        (step.tricks_won[seat] === 1 ? "" : "s") + " worth " + step.trick_points[seat];
      const melds = step.marriages.filter(function (m) { return m.seat === seat; }).map(function (m) {
        return "K" + SUITS[m.suit] + "Q" + SUITS[m.suit] + " marriage " + m.value + (m.valid ? "" : " (counts once a trick is won)");
      });
      box.querySelector(".melds").textContent = melds.join(" · ");
    }

    function render() {
      const hand = hands[state.hand];
      const step = hand.steps[state.step];
      const last = hand.steps.length - 1;
      renderSeat(0, step, hand);
      renderSeat(1, step, hand);
      const trump = $("trump");
      trump.textContent = SUITS[hand.trump];
      trump.className = "trump-suit suit-" + hand.trump;
      trump.dataset.suit = hand.trump;
      const up = $("up-card");
      up.textContent = "";
      if (step.up) up.appendChild(cardEl(step.up, "trump"));
      else up.appendChild(el("span", "k", step.closed ? "closed" : "taken"));
      const stock = $("stock");
      stock.textContent = "";
      step.stock.forEach(function (card) { stock.appendChild(cardEl(card)); });
      step.dead.forEach(function (card) { stock.appendChild(cardEl(card, "dead")); });
      $("stock-count").textContent = step.closed ? "(closed: " + step.dead.length + " cards out of play)"
        : "(" + (step.stock.length + (step.up ? 1 : 0)) + " cards, next drawn first)";
      $("closed-note").textContent = step.closed ? (names[step.closer] + " closed the stock") : "";
      const table = $("table");
      table.textContent = "";
      if (step.table) {
        const t = step.table;
        [[t.leader, t.lead], [1 - t.leader, t.follow]].forEach(function (pair) {
          if (!pair[1]) return;
          const wrap = el("span", "played" + (t.done && t.winner === pair[0] ? " winner" : ""));
          wrap.appendChild(cardEl(pair[1]));
          wrap.appendChild(el("span", "who", names[pair[0]]));
          table.appendChild(wrap);
        });
        if (t.done) table.appendChild(el("span", "k", names[t.winner] + " takes it"));
      }
      const result = $("result");
      if (step.result) {
        const r = step.result;
        result.textContent = (r.winner === null ? "Tie" : names[r.winner] + " wins " + r.game_points +
          " game point" + (r.game_points === 1 ? "" : "s")) + " (" + hand.reason_text + ") · totals " +
          r.totals[0] + "–" + r.totals[1] + " · tricks " + r.tricks[0] + "–" + r.tricks[1] +
          (hand.score_after ? " · match " + hand.score_after[0] + "–" + hand.score_after[1] : "");
      } else if (hand.interrupted && state.step === last) {
        result.textContent = "The hand stopped here: a fault ended the match (see the faults above).";
      } else {
        result.textContent = hand.score_before ? "Match score before this hand: " + hand.score_before[0] + "–" + hand.score_before[1] : "";
      }
      let label = "Hand " + (state.hand + 1) + " · step " + state.step + "/" + last + " · trick " + step.trick;
      if (step.to_move !== null) label += " · " + names[step.to_move] + " to move";
      $("step-label").textContent = label;
      $("step-label").dataset.step = state.step;
      $("step-label").dataset.hand = state.hand;
      let current = null;
      log.querySelectorAll("li").forEach(function (item) {
        const s = Number(item.dataset.step);
        item.classList.toggle("future", s > state.step);
        item.classList.toggle("current", s === state.step);
        if (s <= state.step) current = item;
      });
      if (current) log.scrollTop = Math.max(0, current.offsetTop - log.clientHeight + current.offsetHeight + 8);
      $("btn-first").disabled = $("btn-prev").disabled = $("btn-prev-trick").disabled = state.step === 0;
      $("btn-last").disabled = $("btn-next").disabled = $("btn-next-trick").disabled = state.step === last;
      const hash = "#h" + (state.hand + 1) + "s" + state.step;
      if (location.hash !== hash) history.replaceState(null, "", hash);
    }

    function go(hand, step) {
      const changed = hand !== state.hand;
      state.hand = hand;
      state.step = Math.min(Math.max(step, 0), hands[hand].steps.length - 1);
      if (changed) buildLog(hands[hand]);
      render();
    }

    function trickJump(direction) {
      const steps = hands[state.hand].steps;
      let i = state.step + direction;
      while (i > 0 && i < steps.length - 1 && !(steps[i].table && steps[i].table.done)) i += direction;
      go(state.hand, i);
    }

    $("btn-first").addEventListener("click", function () { go(state.hand, 0); });
    $("btn-last").addEventListener("click", function () { go(state.hand, hands[state.hand].steps.length - 1); });
    $("btn-prev").addEventListener("click", function () { go(state.hand, state.step - 1); });
    $("btn-next").addEventListener("click", function () { go(state.hand, state.step + 1); });
    $("btn-prev-trick").addEventListener("click", function () { trickJump(-1); });
    $("btn-next-trick").addEventListener("click", function () { trickJump(1); });
    document.addEventListener("keydown", function (event) {
      if (event.altKey || event.ctrlKey || event.metaKey) return;
      const target = event.target;
      if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA")) return;
      let handled = true;
      if (event.key === "ArrowRight") { if (event.shiftKey) trickJump(1); else go(state.hand, state.step + 1); }
      else if (event.key === "ArrowLeft") { if (event.shiftKey) trickJump(-1); else go(state.hand, state.step - 1); }
      else if (event.key === "Home") go(state.hand, 0);
      else if (event.key === "End") go(state.hand, hands[state.hand].steps.length - 1);
      else if (event.key === "PageDown") go(Math.min(state.hand + 1, hands.length - 1), 0);
      else if (event.key === "PageUp") go(Math.max(state.hand - 1, 0), 0);
      else handled = false;
      if (handled) event.preventDefault();
    });
    window.addEventListener("hashchange", function () {
      const target = parseHash();
      if (target && (target.hand !== state.hand || target.step !== state.step)) go(target.hand, target.step);
    });
    const start = parseHash() || { hand: 0, step: 0 };
    state.hand = start.hand;
    buildLog(hands[start.hand]);
    go(start.hand, start.step);
  }

  // ------------------------------------------------------------------ live refresh (arena serve)

  function initLive() {
    const body = document.body;
    if (!body.dataset.live) return;
    const url = (body.dataset.root || "") + "status.json";
    const replay = document.getElementById("replay");
    let busy = false;
    setInterval(function () {
      if (busy) return;
      busy = true;
      fetch(url, { cache: "no-store" }).then(function (response) {
        return response.ok ? response.json() : null;
      }).then(function (status) {
        if (!status || status.version === body.dataset.version) return;
        if (replay) {
          // A stored match never changes: keep the reader's place, update the progress line only.
          body.dataset.version = status.version;
          const progress = document.getElementById("progress");
          progress.textContent = status.pairs_done + "/" + status.pairs_total + " pairs" +
            (status.finished ? " · finished" : " · live");
        } else {
          location.reload();
        }
      }).catch(function () { /* the server went away; try again next time */ }).then(function () { busy = false; });
    }, 1500);
  }

  initSortable();
  initReplay();
  initLive();
})();
