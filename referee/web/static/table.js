// A person's own table (/play/TOKEN): the table as every seat sees it, with their hand and moves (a
// match in play is watched through the report's viewer instead: watch.js). Everything a bot chose
// (names, talk) is set as text, never as markup.
(() => {
  const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
  const section = document.getElementById("table");
  const token = section.dataset.token;

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function card(code, trump, tag = "span") {
    const node = el(tag, "card");
    node.textContent = (code[0] === "T" ? "10" : code[0]) + SUITS[code[1]];
    node.dataset.card = code;
    if (code[1] === "H" || code[1] === "D") node.classList.add("red");
    if (trump && code[1] === trump) node.classList.add("trump");
    return node;
  }

  function render(seats, view, talk) {
    if (!view) return;
    const trump = view.declaration ? view.declaration.trump : null;
    const parts = [];
    const centre = el("div", "seat centre");
    const declared = view.declaration
      ? `declares ${view.declaration.tricks} ${SUITS[view.declaration.trump]}`
      : "is to declare";
    centre.append(el("p", "", `Deal ${view.deal}: ${seats[view.declarer]} ${declared}`));
    const last = view.tricks.length ? view.tricks[view.tricks.length - 1] : null;
    if (last && !view.current_trick.cards.length) {
      const line = el("p", "last-trick", "Last trick: ");
      last.cards.forEach((code) => line.append(card(code, trump)));
      if (last.winner !== null) line.append(` → ${seats[last.winner]}`);
      centre.append(line);
    }
    parts.push(centre);
    seats.forEach((name, seat) => {
      const box = el("div", "seat");
      box.dataset.seat = String(seat);
      if (view.to_act === seat) box.classList.add("acting");
      const marks = [];
      if (view.dealer === seat) marks.push("dealer");
      if (view.declarer === seat) marks.push("declarer");
      if (view.forfeited[seat]) marks.push("forfeited");
      box.append(el("strong", "", name));
      if (marks.length) box.append(el("span", "", ` (${marks.join(", ")})`));
      const pyramid = view.pyramids[seat];
      box.append(el("p", "", `tricks ${view.taken[seat]} · ${pyramid.total} points`));
      const trick = view.current_trick;
      const index = (seat - trick.leader + seats.length) % seats.length;
      const played = el("p", "played");
      if (index < trick.cards.length) played.append(card(trick.cards[index], trump));
      box.append(played);
      for (const [speaker, , text] of talk) {
        if (speaker === seat) box.append(el("p", "talk", `“${text}”`));
      }
      parts.push(box);
    });
    section.replaceChildren(...parts);
    section.dataset.steps = String(Number(section.dataset.steps || 0) + 1);
  }

  function lastTalk(view, talk) {
    const trick = view ? view.tricks.length + 1 : 0;
    return talk.filter(([, said]) => said >= trick - 1);
  }

  // A person's own table.
  const prompt = document.getElementById("prompt");
  const hand = document.getElementById("hand");
  const declare = document.getElementById("declare");
  const talkRow = document.getElementById("talk-row");
  const talkInput = document.getElementById("talk");
  const problem = document.getElementById("problem");
  let state = null;
  let sending = false;

  async function send(action) {
    if (sending) return;
    sending = true;
    problem.textContent = "";
    const body = { action };
    if (talkInput.value.trim() && !talkRow.hidden) body.talk = talkInput.value.trim();
    try {
      const answer = await fetch(`/api/v1/human/${token}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      if (!answer.ok) problem.textContent = (await answer.json()).error;
      else talkInput.value = "";
    } finally {
      sending = false;
      poll();
    }
  }

  function show(next) {
    state = next;
    const view = next.view;
    render(next.seats, view, view ? lastTalk(view, next.talk_seen) : []);
    const legal = new Set(next.legal);
    const trump = view && view.declaration ? view.declaration.trump : null;
    hand.replaceChildren(
      ...next.hand.map((code, place) => {
        const button = card(code, trump, "button");
        button.type = "button";
        button.title = `key ${place + 1}`;
        button.disabled = !legal.has(code);
        button.addEventListener("click", () => send(code));
        return button;
      }),
    );
    const declarations = next.legal.filter((action) => /^[0-6][SHDC]$/.test(action));
    declare.hidden = declarations.length === 0;
    declare.replaceChildren(
      ...declarations.map((action) => {
        const button = el("button", "declare", `${action[0]} ${SUITS[action[1]]}`);
        button.type = "button";
        button.dataset.action = action;
        button.addEventListener("click", () => send(action));
        return button;
      }),
    );
    talkRow.hidden = !next.may_talk;
    if (next.over) {
      const totals = next.totals.map((total, seat) => `${next.seats[seat]} ${total}`).join(" · ");
      prompt.replaceChildren(`The match is over: ${totals}. Seed ${next.seed}. `);
      if (next.replay) {
        const link = el("a", "", "Replay it");
        link.href = next.replay;
        prompt.append(link);
      }
      prompt.dataset.over = "true";
    } else if (next.problem) {
      prompt.textContent = next.problem;
    } else {
      prompt.textContent = next.your_turn
        ? declarations.length
          ? "Your turn: declare how many tricks you will take, and the trump."
          : "Your turn: play a card."
        : "The others are playing…";
    }
    if (next.notices.length) problem.textContent = next.notices[next.notices.length - 1];
  }

  async function poll() {
    const answer = await fetch(`/api/v1/human/${token}`, { cache: "no-store" });
    if (answer.ok) show(await answer.json());
  }

  document.addEventListener("keydown", (event) => {
    if (!state || event.target === talkInput || !/^[1-6]$/.test(event.key)) return;
    const code = state.hand[Number(event.key) - 1];
    if (code && state.legal.includes(code)) send(code);
  });
  const timer = setInterval(() => {
    if (state && (state.over || state.problem)) clearInterval(timer);
    else poll();
  }, 500);
  poll();
})();
