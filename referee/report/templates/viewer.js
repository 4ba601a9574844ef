// The match viewer: the table seen from above, stepped through card by card. Shared by every match page;
// it reads the page's match data (the JSON in #match-data, written by referee/report/site.py:viewer_data)
// and draws into #viewer, which stays hidden without JavaScript (the static deal list says it all then).
// Every bot-made string (names, talk) goes in through textContent, never as markup.
(() => {
  "use strict";
  const source = document.getElementById("match-data");
  const root = document.getElementById("viewer");
  if (!source || !root) return;
  const data = JSON.parse(source.textContent);
  const seats = data.seats;
  const players = seats.length;
  if (!data.deals.length) return;

  const SUIT = { S: "♠", H: "♥", D: "♦", C: "♣" };
  const RANK = { 9: "9", T: "10", J: "J", Q: "Q", K: "K", A: "A" };
  const RANKS = "9TJQKA";
  const SUITS = "SHDC";
  const QUOTAS = [1, 2, 3, 4, 3, 2, 1];
  // Places round the table, clockwise from the bottom, for 2, 3 and 4 seats.
  const PLACES = { 2: ["s", "n"], 3: ["s", "w", "e"], 4: ["s", "w", "n", "e"] }[players];

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
  const table = element("div", "felt players-" + players);
  const centre = element("div", "centre");
  const announce = element("p", "announce");
  const trickArea = element("div", "trick-area");
  centre.append(announce, trickArea);
  table.append(centre);
  const seatNodes = seats.map((name, seat) => {
    const node = element("div", "seat at-" + PLACES[seat]);
    node.dataset.seat = String(seat);
    const who = element("p", "who");
    const swatch = element("span", "swatch");
    swatch.style.background = data.colours[seat];
    who.append(swatch, element("b", "name", name), element("span", "roles"));
    const taken = element("p", "taken");
    const hand = element("div", "hand");
    const said = element("div", "said");
    node.append(who, taken, hand, said);
    table.append(node);
    const played = element("div", "played at-" + PLACES[seat]);
    played.dataset.seat = String(seat);
    trickArea.append(played);
    return { node, roles: who.querySelector(".roles"), taken, hand, said, played };
  });
  const pyramids = element("div", "pyramids");
  const keys = element(
    "p",
    "hint",
    "Keys: ← → a card, Shift+← → a trick, Page Up / Page Down a deal, Home / End the match's start and end.",
  );
  root.append(heading, controls, status, insight, table, keys, pyramids);

  const where = (position) => {
    let index = starts.length - 1;
    while (starts[index] > position) index -= 1;
    return { index, inDeal: position - starts[index] };
  };

  const pyramidTable = (seat, upTo, fresh) => {
    const filled = QUOTAS.map(() => []);
    let total = 0;
    deals.slice(0, upTo).forEach((deal) => {
      if (deal.declarer !== seat) return;
      filled[deal.declared].push([deal.taken, deal.points, deal === fresh]);
      total += deal.points;
    });
    const node = element("table", "pyramid");
    node.setAttribute("aria-label", "pyramid of " + seats[seat]);
    node.append(element("caption", "", `${seats[seat]} · ${total} points`));
    const body = element("tbody");
    QUOTAS.forEach((quota, number) => {
      const row = element("tr");
      const [left, middle, right] = [element("td", "left"), element("td", "centre"), element("td", "right")];
      for (let slot = 0; slot < quota; slot += 1) {
        const entry = filled[number][slot];
        const mark = entry && entry[2] ? " new" : "";
        left.append(element("span", entry ? "filled" + mark : "", entry ? String(entry[0]) : "·"));
        middle.append(element("span", entry ? "filled" + mark : "", String(number)));
        right.append(element("span", entry ? "filled" + mark : "", entry ? String(entry[1]) : "·"));
      }
      row.append(left, middle, right);
      body.append(row);
    });
    node.append(body);
    return node;
  };

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
    announce.textContent = "";
    announce.append(
      element("b", "", seats[deal.declarer]),
      ` declares ${deal.declared}, trump `,
      element("span", "HD".includes(deal.trump) ? "red" : "", SUIT[deal.trump]),
    );
    if (ended) announce.append(` · took ${deal.taken}: ${deal.points} points`);
    let text = `Deal ${deal.number} of ${deals.length}`;
    if (!trick) text += ` · ${seats[deal.declarer]} to lead trick 1`;
    else {
      text += ` · trick ${current + 1} of ${deal.tricks.length} · ${shown} of ${trick.cards.length} cards`;
      if (complete && trick.winner !== null) text += ` · ${seats[trick.winner]} takes it`;
    }
    status.textContent = text;

    seatNodes.forEach((view, seat) => {
      view.node.classList.toggle("declarer", seat === deal.declarer);
      view.node.classList.toggle("to-play", !complete && trick !== null ? (trick.leader + shown) % players === seat
        : !trick && seat === deal.declarer);
      view.roles.textContent = "";
      if (seat === deal.dealer) view.roles.append(element("span", "badge dealer", "dealer"));
      if (seat === deal.declarer) {
        view.roles.append(element("span", "badge declarer", `declares ${deal.declared} ${SUIT[deal.trump]}`));
      }
      view.taken.textContent = `tricks ${taken[seat]}`;
      view.taken.dataset.taken = String(taken[seat]);
      view.hand.replaceChildren(...deal.hands[seat].filter((card) => !gone.has(card)).map((card) => cardNode(card, deal.trump)));
      view.played.replaceChildren();
      view.said.replaceChildren(
        ...deal.talk
          .filter((message) => trick && message.seat === seat && message.trick === current + 1)
          .map((message) => element("q", "talk", message.text)),
      );
    });
    if (trick) {
      trick.cards.slice(0, shown).forEach((card, i) => {
        const seat = (trick.leader + i) % players;
        const node = cardNode(card, deal.trump);
        if (complete && seat === trick.winner) node.classList.add("winner");
        seatNodes[seat].played.append(node);
      });
    }
    if (data.analysis) explain(data.analysis.deals[index], inDeal);
    const upTo = ended ? index + 1 : index;
    pyramids.replaceChildren(...seats.map((_, seat) => pyramidTable(seat, upTo, ended ? deal : null)));
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
