// The live view of referee serve (/live/MATCH_ID; /live follows whatever is in play): the report's own
// viewer (PyramidViewer.table, from /viewer.js) fed by the event stream instead of a stored match, so a
// match looks the same watched and replayed. It knows only what every seat sees (docs/SERVER.md, "A
// match in play"): the `view` of /api/v1/live/MATCH_ID and of each `play` event holds no hand, only how
// many cards each seat has left, which are drawn face down. Above the table, "now playing" lists the
// matches in play and switches between them without a reload. Every name and word of talk is set as
// text, never as markup.
(() => {
  "use strict";
  const root = document.getElementById("viewer");
  const status = document.getElementById("live-status");
  const stepLine = document.getElementById("live-step");
  const list = document.querySelector("#now-playing ul");
  const heading = document.querySelector("h1");
  const data = JSON.parse(document.getElementById("live-data").textContent);
  const makeTable = window.PyramidViewer.table;

  let matchId = status.dataset.match || "";
  let inPlay = [];
  let drawn = null; // { table, seats }: the table drawn for the match watched, rebuilt for another
  let clocks = null; // the watched match's clocks, as its last event gave them, and when it came
  let generation = 0; // bumped at each switch, so that an answer for a match left behind is dropped
  let fresh = false; // an event of the match watched came since the switch: newer than the fetch's answer

  const el = (tag, className, text) => {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const colour = (name) => data.colours[name] || data.other;
  const clockText = (seconds) => {
    const whole = Math.max(0, Math.ceil(seconds));
    return whole >= 60 ? `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, "0")}` : `${whole} s`;
  };

  // The trick to show: the one being played or, before its first card, the one just taken (its winner
  // marked), as the replay shows a trick boundary.
  const trickShown = (view) => {
    if (view.current_trick.cards.length) return [view.tricks.length + 1, view.current_trick];
    if (view.tricks.length) return [view.tricks.length, view.tricks[view.tricks.length - 1]];
    return [0, null];
  };

  const ended = (view) => view.phase === "deal-over" || view.phase === "match-over";

  const scene = (view) => {
    const [number, trick] = trickShown(view);
    const declared = view.declaration ? view.declaration.tricks : null;
    const over = ended(view);
    const took = view.taken[view.declarer];
    return {
      number: view.deal,
      dealer: view.dealer,
      declarer: view.declarer,
      declared,
      trump: view.declaration ? view.declaration.trump : null,
      result: over && declared !== null ? `took ${took}: ${10 - 2 * Math.abs(took - declared)} points` : null,
      trick: trick && { leader: trick.leader, cards: trick.cards, winner: trick.winner },
      toPlay: view.to_act,
      hands: view.cards_left || view.taken.map(() => 0), // a view relayed by an older worker has none
      taken: view.taken,
      // Live, a trick can pass in a blink: what was said stays at its seat through the next trick too.
      said: view.talk.filter(([, said]) => said === number || said === number - 1).map(([seat, , text]) => [seat, text]),
      pyramids: view.pyramids.map((pyramid, seat) => ({
        total: pyramid.total,
        entries: pyramid.entries.map((entry, index) => [
          ...entry,
          over && seat === view.declarer && index === pyramid.entries.length - 1,
        ]),
      })),
      forfeited: view.forfeited,
    };
  };

  const stepText = (seats, view) => {
    const [number, trick] = trickShown(view);
    let text = `Deal ${view.deal} of ${16 * seats.length}`;
    if (view.phase === "declare") text += ` · ${seats[view.declarer]} to declare`;
    else if (trick) {
      text += ` · trick ${number} of 6 · ${trick.cards.length} of ${seats.length} cards`;
      if (trick.winner !== null) text += ` · ${seats[trick.winner]} takes it`;
    }
    if (view.phase === "play" && view.to_act !== null) text += ` · ${seats[view.to_act]} to play`;
    if (ended(view)) text += view.phase === "match-over" ? " · the match is over" : " · the deal is over";
    return text;
  };

  // Each seat's clock: the bank the referee last gave it and, for the seat to act, the time it has left
  // for this decision (its per-action time and its bank), counted down here between events.
  const tick = () => {
    if (!drawn) return;
    drawn.seats.forEach((_, seat) => {
      const bank = clocks && clocks.banks[seat];
      let text = null;
      if (bank === null || bank === undefined) text = null;
      else if (seat !== clocks.toAct) text = `bank ${clockText(bank)}`;
      else {
        const spent = (performance.now() - clocks.since) / 1000;
        text = `${clockText((clocks.perAction || 0) + bank - spent)} to play`;
      }
      drawn.table.clock(seat, text);
    });
  };
  setInterval(tick, 500);

  const show = (state, fromEvent) => {
    if (!state || state.match_id !== matchId) return;
    if (fromEvent) fresh = true;
    root.dataset.deal = String(state.deal);
    if (state.on_worker && !state.deals_hidden && !state.view) {
      drawn = null;
      clocks = null;
      stepLine.textContent = "";
      root.replaceChildren(el("p", "", "Played on a worker of the cluster: its first cards are on their way."));
      return;
    }
    if (state.deals_hidden || !state.view) {
      drawn = null;
      clocks = null;
      stepLine.textContent = "";
      root.replaceChildren(
        el("p", "", `Deal ${state.deal} in play. Its cards are hidden until every match of its table is played.`),
      );
      return;
    }
    const key = JSON.stringify(state.seats);
    if (!drawn || drawn.key !== key) {
      const table = makeTable(state.seats, state.seats.map(colour));
      drawn = { table, key, seats: state.seats };
      root.replaceChildren(table.felt, table.pyramids);
    }
    const view = state.view;
    const [number, trick] = trickShown(view);
    root.dataset.trick = String(number);
    root.dataset.played = String(trick ? trick.cards.length : 0);
    root.dataset.phase = view.phase;
    drawn.table.draw(scene(view));
    stepLine.textContent = stepText(state.seats, view);
    const given = view.clocks || { banks: [], per_action: null };
    clocks = { banks: given.banks, perAction: given.per_action, toAct: view.to_act, since: performance.now() };
    tick();
    const listed = inPlay.find((match) => match.match_id === state.match_id);
    if (listed && listed.deal !== state.deal) {
      listed.deal = state.deal;
      drawList();
    }
  };

  // The switcher, updated in place (an item kept while its match plays, so that a link keeps its focus
  // and a click lands on what it aimed at), in the order the server lists the matches.
  const items = new Map();
  const drawList = () => {
    const ids = new Set(inPlay.map((match) => match.match_id));
    for (const [id, item] of items) {
      if (!ids.has(id)) {
        item.node.remove();
        items.delete(id);
      }
    }
    const nodes = inPlay.map((match) => {
      let item = items.get(match.match_id);
      if (!item) {
        const node = el("li");
        const link = el("a", "", match.position ? `match ${match.position}` : match.match_id);
        link.href = "/live/" + encodeURIComponent(match.match_id);
        link.dataset.match = match.match_id;
        const names = match.seats.map((name) => (match.remote && match.remote.includes(name) ? `${name} (remote)` : name));
        const deal = el("span", "deal");
        node.append(link, el("span", "who", ` ${names.join(" · ")}`), deal);
        item = { node, link, deal };
        items.set(match.match_id, item);
      }
      item.deal.textContent = ` · deal ${match.deal}`;
      if (match.match_id === matchId) item.link.setAttribute("aria-current", "page");
      else item.link.removeAttribute("aria-current");
      return item.node;
    });
    nodes.forEach((node, index) => {
      if (list.children[index] !== node) list.insertBefore(node, list.children[index] || null);
    });
    while (list.children.length > nodes.length) list.lastChild.remove();
    if (!nodes.length) list.append(el("li", "", "No match in play now."));
  };

  const setStatus = (state) => {
    let text = `in play · seats: ${state.seats.map((name, seat) => `${seat} = ${name}`).join(", ")}`;
    if (state.on_worker) text += " · played on a worker of the cluster, which relays its view";
    status.replaceChildren(text);
  };

  // Watch another match (or the first one, for /live): the table is drawn afresh from the API's answer,
  // and the events of that match keep it up to date from then on.
  const watch = async (id, push) => {
    const mine = ++generation;
    matchId = id;
    fresh = false;
    status.dataset.match = id;
    root.dataset.match = id;
    delete status.dataset.over;
    if (push) history.pushState({ match: id }, "", "/live/" + encodeURIComponent(id));
    heading.textContent = `Live: match ${id}`;
    document.title = `live: ${id} · Pyramid Arena`;
    drawn = null;
    clocks = null;
    root.replaceChildren();
    stepLine.textContent = "";
    drawList();
    const answer = await fetch("/api/v1/live/" + encodeURIComponent(id), { cache: "no-store" });
    if (mine !== generation) return;
    if (!answer.ok) return finish("Not in play: ", " list it once it is stored.");
    const state = await answer.json();
    if (mine !== generation) return;
    setStatus(state);
    if (!fresh) show(state, false);
  };

  const follows = () => data.follow && (!matchId || status.dataset.over === "true");
  const moveOn = () => {
    if (follows() && inPlay.length) watch(inPlay[0].match_id, false);
  };

  // The match watched is over: its match_finished came or, after a dropped stream, it is no longer in
  // play. /live moves on to another match in play a moment later.
  const finish = (before, after) => {
    clocks = null;
    tick();
    status.replaceChildren(before);
    const link = el("a", "", "the matches");
    link.href = "/matches.html";
    status.append(link, after);
    status.dataset.over = "true";
    if (data.follow) setTimeout(moveOn, 3000);
  };

  const refreshList = async () => {
    const answer = await fetch("/api/v1/live", { cache: "no-store" });
    if (!answer.ok) return;
    inPlay = (await answer.json()).in_play;
    drawList();
    if (!matchId) moveOn();
  };

  list.addEventListener("click", (event) => {
    const link = event.target.closest("a[data-match]");
    if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    if (link.dataset.match !== matchId) watch(link.dataset.match, true);
  });
  window.addEventListener("popstate", () => {
    const id = decodeURIComponent(location.pathname.replace(/^\/live\/?/, ""));
    if (id && id !== matchId) watch(id, false);
  });

  const events = new EventSource("/api/v1/events");
  let opened = 0;
  events.addEventListener("open", () => {
    if (!opened++) return;
    refreshList(); // back after a drop: catch up on what was missed
    if (matchId && status.dataset.over !== "true") watch(matchId, false);
  });
  events.addEventListener("play", (event) => show(JSON.parse(event.data), true));
  events.addEventListener("match_started", (event) => {
    const started = JSON.parse(event.data);
    if (!inPlay.some((match) => match.match_id === started.match_id)) inPlay.push(started);
    drawList();
    if (follows()) watch(started.match_id, false);
  });
  events.addEventListener("match_finished", (event) => {
    const finished = JSON.parse(event.data);
    inPlay = inPlay.filter((match) => match.match_id !== finished.match_id);
    drawList();
    if (finished.match_id === matchId) finish("The match is over: ", " list it with its result.");
  });

  refreshList();
  if (matchId) watch(matchId, false);
})();
