// The author's own page (/me): the token pasted stays in this script's memory, sent with each read as
// an Authorization header (never in a URL, never stored); every name and line is set as text.
(() => {
  let token = "";
  const $ = (id) => document.getElementById(id);

  function rows(table, lines) {
    const body = $(table).tBodies[0];
    body.replaceChildren();
    for (const cells of lines) {
      const row = body.insertRow();
      for (const value of cells) row.insertCell().textContent = String(value ?? "—");
    }
  }

  async function show() {
    const answer = await fetch("/api/v1/me", { headers: { authorization: `Bearer ${token}` }, cache: "no-store" });
    const data = await answer.json();
    if (!answer.ok) {
      $("me-problem").textContent = data.error || `the server answered ${answer.status}`;
      $("me").hidden = true;
      return;
    }
    $("me-problem").textContent = "";
    $("me").hidden = false;
    $("me-name").textContent = data.name;
    const connection = data.connection ? ` · ${data.connection}` : "";
    $("me-status").textContent = (data.connected ? "connected now" : "away now") + connection;
    $("me-connections").replaceChildren(
      ...data.presence.map(([when, up]) => {
        const item = document.createElement("li");
        item.textContent = `${new Date(when * 1000).toLocaleString()}: ${up ? "connected" : "went away"}`;
        return item;
      }),
    );
    const rating = (value) => (value === null || value === undefined ? "—" : value.toFixed(1));
    rows(
      "me-versions",
      data.versions.map((v, n) => [
        n === 0 ? `${v.version} (playing now)` : v.version, v.matches, v.wins, v.mean_points, v.faults, rating(v.mu), rating(v.sigma),
      ]),
    );
    rows("me-faults", data.faults.map((f) => [`${f.position} ${f.match_id}`, f.deal, f.kind, f.detail]));
    $("me-faults-held").textContent = data.faults_held_back
      ? `${data.faults_held_back} more of tables still being played: shown once their tables are complete.`
      : "";
    rows("me-debug", data.debug.map((d) => [d.match_id, d.deal, d.step, d.fate === "kept" ? d.text : `(not kept: ${d.size} bytes, ${d.fate})`]));
    $("me-debug-held").textContent = data.debug_held_back
      ? `${data.debug_held_back} more of tables still being played: shown once their tables are complete.`
      : "";
    $("me-practice").replaceChildren(
      ...data.practice.map((p) => {
        const item = document.createElement("li");
        const link = document.createElement("a");
        link.href = p.replay;
        link.textContent = (p.seats || []).join(" · ");
        item.append(link, `: ${(p.totals || []).join(" · ")}`);
        return item;
      }),
    );
  }

  // A practice match asked for now: its opponents picked from the league's entrants that are not
  // remote and the sample bots, one per other seat; its state followed until it is over.
  let choices = [];

  async function loadChoices() {
    const answer = await fetch("/api/v1/entrants", { cache: "no-store" });
    if (!answer.ok) return;
    const { entrants } = await answer.json();
    choices = [...entrants.filter((e) => e.kind !== "remote").map((e) => e.name), "sample:random", "sample:heuristic"];
    pickers();
  }

  function pickers() {
    const seats = Number($("practice-size").value) - 1;
    const pick = [];
    for (let n = 0; n < seats; n++) {
      const label = document.createElement("label");
      const select = document.createElement("select");
      select.className = "practice-opponent";
      for (const name of choices) select.add(new Option(name, name));
      select.selectedIndex = choices.length ? n % choices.length : -1;
      label.append(`Opponent ${n + 1} `, select);
      pick.push(label);
    }
    $("practice-opponents").replaceChildren(...pick);
  }

  async function practise(event) {
    event.preventDefault();
    const opponents = [...document.querySelectorAll(".practice-opponent")].map((s) => s.value);
    const answer = await fetch("/api/v1/practice", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ opponents }),
    });
    const data = await answer.json();
    if (!answer.ok) {
      $("practice-state").textContent = data.error || `the server answered ${answer.status}`;
      return;
    }
    for (let state = data; ; ) {
      $("practice-state").textContent = `practice ${state.seats.join(" · ")}: ${state.state}${state.problem ? `: ${state.problem}` : ""}`;
      if (state.state === "over" || state.state === "failed") break;
      await new Promise((done) => setTimeout(done, 1000));
      state = await (await fetch(`/api/v1/practice/${encodeURIComponent(data.key)}`, { cache: "no-store" })).json();
    }
    show();
  }

  $("practice-size").addEventListener("change", pickers);
  $("practice").addEventListener("submit", practise);

  $("sign-in").addEventListener("submit", (event) => {
    event.preventDefault();
    token = $("token").value.trim();
    $("token").value = "";
    show();
    loadChoices();
  });
  const events = new EventSource("/api/v1/events");
  for (const kind of ["pages", "connection"]) events.addEventListener(kind, () => token && show());
})();
