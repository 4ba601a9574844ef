// The match viewer: the table seen from above. One drawing, PyramidViewer.table, fed two ways, so that a
// match looks the same played back and watched live:
// - here, by a stored match: the JSON in #match-data (written by referee/report/site.py:viewer_data),
//   stepped card by card into #viewer, which stays hidden without JavaScript (the static deal list says
//   it all then);
// - on referee serve's live page, by the event stream (referee/web/static/watch.js), which knows only
//   what every seat sees: each hand is drawn as its count of cards face down, never as cards.
// Every bot-made string (names, talk) goes in through textContent, never as markup.
(() => {
  "use strict";
  const SUIT = { S: "♠", H: "♥", D: "♦", C: "♣" };
  const RANK = { 9: "9", T: "10", J: "J", Q: "Q", K: "K", A: "A" };
  const QUOTAS = [1, 2, 3, 4, 3, 2, 1];
  // Places round the table, clockwise from the bottom, for 2, 3 and 4 seats.
  const PLACES = { 2: ["s", "n"], 3: ["s", "w", "e"], 4: ["s", "w", "n", "e"] };

  const element = (tag, className, text) => {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const cardNode = (code, trump) => {
    const node = element("span", "card" + ("HD".includes(code[1]) ? " red" : "") + (code[1] === trump ? " trump" : ""));
    node.dataset.card = code;
    node.append(element("span", "rank", RANK[code[0]]), element("span", "suit", SUIT[code[1]]));
    node.setAttribute("aria-label", RANK[code[0]] + SUIT[code[1]] + (code[1] === trump ? " (trump)" : ""));
    return node;
  };
  // A card face down: it says only that the seat holds one more card.
  const backNode = () => {
    const node = element("span", "card back");
    node.setAttribute("aria-hidden", "true");
    return node;
  };

  // The table of `seats` (names, in seat order) with their `colours`: the felt (seats round the trick)
  // and the pyramids, for the caller to place; draw(scene) shows one moment of a deal. A scene is
  //   { number, dealer, declarer, declared, trump }  the deal (declared and trump null before the declaration)
  //   result       what the declarer scored, once the deal is over (text), or null
  //   trick        { leader, cards, winner } on the table, or null; winner is the seat whose card to mark
  //   toPlay       the seat to act, or null
  //   hands        per seat, its cards (codes) or, watched live, how many it holds (drawn face down)
  //   taken        tricks per seat this deal
  //   said         [[seat, text]] of the trick shown
  //   pyramids     per seat { total, entries: [[declared, taken, points, fresh]] }
  //   forfeited    per seat, whether the referee's autopilot plays it (optional)
  const table = (seats, colours) => {
    const players = seats.length;
    const places = PLACES[players];
    const felt = element("div", "felt players-" + players);
    const centre = element("div", "centre");
    const announce = element("p", "announce");
    const trickArea = element("div", "trick-area");
    centre.append(announce, trickArea);
    felt.append(centre);
    const seatNodes = seats.map((name, seat) => {
      const node = element("div", "seat at-" + places[seat]);
      node.dataset.seat = String(seat);
      const who = element("p", "who");
      const swatch = element("span", "swatch");
      swatch.style.background = colours[seat];
      const roles = element("span", "roles");
      who.append(swatch, element("b", "name", name), roles);
      const taken = element("p", "taken");
      const clock = element("p", "clock");
      clock.hidden = true;
      const hand = element("div", "hand");
      const said = element("div", "said");
      node.append(who, taken, clock, hand, said);
      felt.append(node);
      const played = element("div", "played at-" + places[seat]);
      played.dataset.seat = String(seat);
      trickArea.append(played);
      return { node, roles, taken, clock, hand, said, played };
    });
    const pyramids = element("div", "pyramids");

    const pyramidTable = (seat, pyramid) => {
      const filled = QUOTAS.map(() => []);
      pyramid.entries.forEach((entry) => filled[entry[0]].push(entry));
      const node = element("table", "pyramid");
      node.setAttribute("aria-label", "pyramid of " + seats[seat]);
      node.append(element("caption", "", `${seats[seat]} · ${pyramid.total} points`));
      const body = element("tbody");
      QUOTAS.forEach((quota, number) => {
        const row = element("tr");
        const [left, middle, right] = [element("td", "left"), element("td", "centre"), element("td", "right")];
        for (let slot = 0; slot < quota; slot += 1) {
          const entry = filled[number][slot];
          const mark = entry ? "filled" + (entry[3] ? " new" : "") : "";
          left.append(element("span", mark, entry ? String(entry[1]) : "·"));
          middle.append(element("span", mark, String(number)));
          right.append(element("span", mark, entry ? String(entry[2]) : "·"));
        }
        row.append(left, middle, right);
        body.append(row);
      });
      node.append(body);
      return node;
    };

    const draw = (scene) => {
      const declared = scene.declared !== null && scene.declared !== undefined;
      announce.textContent = "";
      announce.append(element("b", "", seats[scene.declarer]));
      if (declared) {
        announce.append(
          ` declares ${scene.declared}, trump `,
          element("span", "HD".includes(scene.trump) ? "red" : "", SUIT[scene.trump]),
        );
      } else {
        announce.append(" is to declare");
      }
      if (scene.result) announce.append(" · " + scene.result);
      const complete = scene.trick !== null && scene.trick.winner !== null && scene.trick.winner !== undefined;
      seatNodes.forEach((view, seat) => {
        view.node.classList.toggle("declarer", seat === scene.declarer);
        view.node.classList.toggle("to-play", seat === scene.toPlay);
        view.roles.textContent = "";
        if (seat === scene.dealer) view.roles.append(element("span", "badge dealer", "dealer"));
        if (seat === scene.declarer) {
          const label = declared ? `declares ${scene.declared} ${SUIT[scene.trump]}` : "declarer";
          view.roles.append(element("span", "badge declarer", label));
        }
        if (scene.forfeited && scene.forfeited[seat]) {
          view.roles.append(element("span", "badge forfeited", "forfeited: autopilot"));
        }
        view.taken.textContent = `tricks ${scene.taken[seat]}`;
        view.taken.dataset.taken = String(scene.taken[seat]);
        const hand = scene.hands[seat];
        if (typeof hand === "number") {
          view.hand.replaceChildren(...Array.from({ length: hand }, backNode));
          view.hand.classList.add("face-down");
          view.hand.dataset.left = String(hand);
          view.hand.setAttribute("aria-label", `${hand} cards face down`);
        } else {
          view.hand.replaceChildren(...hand.map((card) => cardNode(card, scene.trump)));
        }
        view.played.replaceChildren();
        view.said.replaceChildren(
          ...scene.said.filter(([speaker]) => speaker === seat).map(([, text]) => element("q", "talk", text)),
        );
      });
      if (scene.trick) {
        scene.trick.cards.forEach((card, i) => {
          const seat = (scene.trick.leader + i) % players;
          const node = cardNode(card, scene.trump);
          if (complete && seat === scene.trick.winner) node.classList.add("winner");
          seatNodes[seat].played.append(node);
        });
      }
      pyramids.replaceChildren(...scene.pyramids.map((pyramid, seat) => pyramidTable(seat, pyramid)));
    };
    // A seat's clock, as text (null hides it): the live page ticks it between events.
    const clock = (seat, text) => {
      const node = seatNodes[seat].clock;
      node.hidden = text === null;
      node.textContent = text === null ? "" : text;
    };
    return { felt, pyramids, draw, clock };
  };
  window.PyramidViewer = Object.freeze({ table, SUIT });

  // The replay of a stored match.
  const source = document.getElementById("match-data");
  const root = document.getElementById("viewer");
  if (!source || !root) return;
  const data = JSON.parse(source.textContent);
  const seats = data.seats;
  const players = seats.length;
  if (!data.deals.length) return;
  const RANKS = "9TJQKA";
  const SUITS = "SHDC";

  const deals = data.deals.map(([number, dealer, declarer, declared, trump, taken, points, tricks, talk]) => {
    const deal = {
      number, dealer, declarer, declared, trump, taken, points,
      tricks: tricks.map(([leader, cards, winner]) => ({ leader, winner, cards: cards.match(/../g) || [] })),
      talk: talk.map(([seat, trick, text]) => ({ seat, trick, text })),
      hands: seats.map(() => []),
    };
    deal.tricks.forEach((trick) =>
      trick.cards.forEach((card, i) => deal.hands[(trick.leader + i) % players].push(card)),
    );
    const order = (card) => (card[1] === trump ? -10 : SUITS.indexOf(card[1]) * 10) - RANKS.indexOf(card[0]);
    deal.hands.forEach((hand) => hand.sort((a, b) => order(a) - order(b)));
    deal.steps = 1 + deal.tricks.reduce((count, trick) => count + trick.cards.length, 0);
    return deal;
  });
  const starts = [];
  deals.reduce((start, deal) => (starts.push(start), start + deal.steps), 0);
  const lastStep = starts[starts.length - 1] + deals[deals.length - 1].steps - 1;
  let step = 0; // over the whole match: each deal's start, then one step per card played

  // The frame, built once.
  root.hidden = false;
  const heading = element("h2", "", "Replay");
  const controls = element("div", "controls");
  const buttons = [
    ["deal-prev", "|◀ deal", "previous deal (Page Up)"],
    ["trick-prev", "◀◀ trick", "previous trick (Shift+←)"],
    ["play-prev", "◀ card", "previous card (←)"],
    ["play-next", "card ▶", "next card (→)"],
    ["trick-next", "trick ▶▶", "next trick (Shift+→)"],
    ["deal-next", "deal ▶|", "next deal (Page Down)"],
  ];
  buttons.forEach(([go, label, title]) => {
    const button = element("button", "", label);
    button.type = "button";
    button.dataset.go = go;
    button.title = title;
    controls.append(button);
  });
  const chooser = element("select");
  chooser.id = "deal-select";
  chooser.setAttribute("aria-label", "deal");
  deals.forEach((deal, index) => {
    const option = element(
      "option",
      "",
      `Deal ${deal.number}: ${seats[deal.declarer]} declares ${deal.declared} ${SUIT[deal.trump]}`,
    );
    option.value = String(index);
    chooser.append(option);
  });
  controls.append(chooser);
  const status = element("p", "step");
  status.setAttribute("aria-live", "polite");
  // With a kept analysis (referee analyze), what each decision cost: the declaration at a deal's start,
  // then the card just played.
  const insight = element("p", "insight");
  insight.id = "viewer-analysis";
  insight.hidden = !data.analysis;
  const view = table(seats, data.colours);
  const keys = element(
    "p",
    "hint",
    "Keys: ← → a card, Shift+← → a trick, Page Up / Page Down a deal, Home / End the match's start and end.",
  );
  root.append(heading, controls, status, insight, view.felt, keys, view.pyramids);

  const where = (position) => {
    let index = starts.length - 1;
    while (starts[index] > position) index -= 1;
    return { index, inDeal: position - starts[index] };
  };

  // Each seat's pyramid once the deals before `upTo` are scored; `fresh` the deal just scored.
  const pyramidsAt = (upTo, fresh) =>
    seats.map((_, seat) => {
      const entries = deals
        .slice(0, upTo)
        .filter((deal) => deal.declarer === seat)
        .map((deal) => [deal.declared, deal.taken, deal.points, deal === fresh]);
      return { total: entries.reduce((sum, entry) => sum + entry[2], 0), entries };
    });

  const signed = (x) => (x >= 0.05 ? "+" + x.toFixed(1) : x <= -0.05 ? "−" + (-x).toFixed(1) : "±0.0");
  const explain = ([luck, decisions], inDeal) => {
    const [seat, chosen, best, loss, se, count] = decisions[inDeal];
    let text = `Analysis: ${seats[seat]} ${inDeal === 0 ? "declared" : "played"} ${chosen}`;
    if (count < 2) text += ", the only choice";
    else if (loss <= 0) text += ", the best choice";
    else text += `; best ${best}: loss ${loss.toFixed(2)} ± ${se.toFixed(2)} points`;
    if (inDeal === 0) text += " · luck " + seats.map((name, s) => `${name} ${signed(luck[s])}`).join(", ");
    insight.textContent = text;
    insight.dataset.seat = String(seat);
    insight.dataset.loss = String(loss);
  };

  const draw = () => {
    const { index, inDeal } = where(step);
    const deal = deals[index];
    // The tricks up to this step: the last one touched is on the table, complete or not.
    let left = inDeal;
    let current = -1;
    let shown = 0;
    const gone = new Set();
    const taken = seats.map(() => 0);
    deal.tricks.forEach((trick, number) => {
      if (left <= 0) return;
      shown = Math.min(left, trick.cards.length);
      left -= shown;
      current = number;
      trick.cards.slice(0, shown).forEach((card) => gone.add(card));
      if (shown === trick.cards.length && trick.winner !== null) taken[trick.winner] += 1;
    });
    const trick = current >= 0 ? deal.tricks[current] : null;
    const complete = trick !== null && shown === trick.cards.length;
    const ended = inDeal === deal.steps - 1;

    root.dataset.deal = String(deal.number);
    root.dataset.trick = String(current + 1);
    root.dataset.played = String(shown);
    chooser.value = String(index);
    let text = `Deal ${deal.number} of ${deals.length}`;
    if (!trick) text += ` · ${seats[deal.declarer]} to lead trick 1`;
    else {
      text += ` · trick ${current + 1} of ${deal.tricks.length} · ${shown} of ${trick.cards.length} cards`;
      if (complete && trick.winner !== null) text += ` · ${seats[trick.winner]} takes it`;
    }
    status.textContent = text;
    view.draw({
      number: deal.number,
      dealer: deal.dealer,
      declarer: deal.declarer,
      declared: deal.declared,
      trump: deal.trump,
      result: ended ? `took ${deal.taken}: ${deal.points} points` : null,
      trick: trick && {
        leader: trick.leader,
        cards: trick.cards.slice(0, shown),
        winner: complete ? trick.winner : null,
      },
      toPlay: trick ? (complete ? null : (trick.leader + shown) % players) : deal.declarer,
      hands: deal.hands.map((hand) => hand.filter((card) => !gone.has(card))),
      taken,
      said: deal.talk
        .filter((message) => trick && message.trick === current + 1)
        .map((message) => [message.seat, message.text]),
      pyramids: pyramidsAt(ended ? index + 1 : index, ended ? deal : null),
    });
    if (data.analysis) explain(data.analysis.deals[index], inDeal);
  };
  const go = (target, keepHash) => {
    const before = where(step).index;
    step = Math.max(0, Math.min(lastStep, target));
    draw();
    const after = where(step).index;
    if (!keepHash && after !== before) {
      try {
        history.replaceState(null, "", "#deal-" + deals[after].number);
      } catch (error) {
        // A page opened where the address cannot change (some file viewers): the viewer works regardless.
      }
    }
  };
  // A trick boundary: a deal's start or a step that completes a trick.
  const boundary = (position) => {
    const { index, inDeal } = where(position);
    let count = 0;
    for (const trick of deals[index].tricks) {
      if (inDeal === count) return true;
      count += trick.cards.length;
    }
    return inDeal === count;
  };
  const moves = {
    "play-prev": () => step - 1,
    "play-next": () => step + 1,
    "trick-prev": () => {
      let position = step - 1;
      while (position > 0 && !boundary(position)) position -= 1;
      return position;
    },
    "trick-next": () => {
      let position = step + 1;
      while (position < lastStep && !boundary(position)) position += 1;
      return position;
    },
    "deal-prev": () => {
      const { index, inDeal } = where(step);
      return inDeal > 0 ? starts[index] : starts[Math.max(0, index - 1)];
    },
    "deal-next": () => {
      const { index } = where(step);
      return index + 1 < starts.length ? starts[index + 1] : lastStep;
    },
    first: () => 0,
    last: () => lastStep,
  };
  controls.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-go]");
    if (button) go(moves[button.dataset.go]());
  });
  chooser.addEventListener("change", () => go(starts[Number(chooser.value)]));
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.target.closest && event.target.closest("input, select, textarea")) return;
    const move = {
      ArrowLeft: event.shiftKey ? "trick-prev" : "play-prev",
      ArrowRight: event.shiftKey ? "trick-next" : "play-next",
      PageUp: "deal-prev",
      PageDown: "deal-next",
      Home: "first",
      End: "last",
    }[event.key];
    if (!move) return;
    event.preventDefault();
    go(moves[move]());
  });

  const fromAddress = () => {
    const found = /^#deal-(\d+)$/.exec(location.hash);
    const index = found ? deals.findIndex((deal) => deal.number === Number(found[1])) : -1;
    if (index < 0) return false;
    go(starts[index], true);
    root.scrollIntoView();
    return true;
  };
  window.addEventListener("hashchange", fromAddress);
  if (fromAddress()) {
    // The browser scrolls to the static deal of that number once the page has loaded: show the viewer.
    window.addEventListener("load", () => setTimeout(() => root.scrollIntoView(), 0));
  } else {
    draw();
  }
})();
