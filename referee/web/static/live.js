// The live script of referee serve's report pages: it keeps the page up to date without a reload.
// After the results change the server sends `pages` on its event stream (at most once a second); this
// script then fetches the page again (rendered then) and swaps its <main> in place (the report's
// script runs again for sorting and the chart's legend). On the index and the matches list it keeps a
// box of the matches in play, each linking to its live view; on an entrant's page, a table of each
// version's results; beside each remote entrant, whether its bot is connected now. Every name is set
// as text, never as markup.
(() => {
  const page = location.pathname.split("/").pop() || "index.html";
  const listsPlay = page === "index.html" || page === "matches.html" || page === "";
  const waiting = document.getElementById("waiting") !== null;
  let generation = 0;

  async function refresh() {
    if (waiting) {
      location.reload();
      return;
    }
    if (page.startsWith("match-")) return; // a stored match's page does not change
    const mine = ++generation;
    const answer = await fetch(location.pathname, { cache: "no-store" });
    if (!answer.ok || mine !== generation) return;
    const fresh = new DOMParser().parseFromString(await answer.text(), "text/html").querySelector("main");
    const main = document.querySelector("main");
    if (!fresh || !main) return;
    main.replaceChildren(...fresh.childNodes);
    document.body.dataset.refreshed = String(Number(document.body.dataset.refreshed || 0) + 1);
    const script = document.createElement("script");
    script.src = "/report.js?again=" + mine;
    document.body.appendChild(script);
    showPresence();
    await showInPlay();
    await showVersions();
  }

  function box() {
    let section = document.getElementById("in-play");
    if (!section) {
      section = document.createElement("section");
      section.id = "in-play";
      section.className = "in-play";
      section.setAttribute("aria-live", "polite");
      document.querySelector("main")?.prepend(section);
    }
    return section;
  }

  async function showInPlay() {
    if (!listsPlay || waiting) return;
    const answer = await fetch("/api/v1/live", { cache: "no-store" });
    if (!answer.ok) return;
    const { in_play: inPlay } = await answer.json();
    const section = box();
    const title = document.createElement("h2");
    title.textContent = "In play";
    const list = document.createElement("ul");
    for (const match of inPlay) {
      const item = document.createElement("li");
      const link = document.createElement("a");
      link.href = "/live/" + encodeURIComponent(match.match_id);
      link.textContent = `match ${match.position ?? ""} ${match.match_id}`;
      const seats = match.seats.map((name) => (match.remote?.includes(name) ? `${name} (remote)` : name));
      item.append(link, ` · ${seats.join(" · ")} · deal ${match.deal}`);
      if (match.on_worker) item.append(" · on a worker");
      if (match.deals_hidden) item.append(" (deals hidden until its table is complete)");
      list.appendChild(item);
    }
    const play = document.createElement("p");
    const link = document.createElement("a");
    link.href = "/play";
    link.textContent = "Play it yourself";
    play.append(inPlay.length ? "" : "No match in play now. ", link, ": sit down against the entrants.");
    const parts = [title, list, play];
    if (inPlay.length) {
      const tv = document.createElement("p");
      const follow = document.createElement("a");
      follow.href = "/live";
      follow.textContent = "Watch what is playing";
      tv.append(follow, ": one match after another, as they are played.");
      parts.splice(1, 0, tv);
    }
    section.replaceChildren(...parts);
  }

  async function showVersions() {
    if (!page.startsWith("entrant-")) return;
    const answer = await fetch("/api/v1/entrants/" + encodeURIComponent(entrantName), { cache: "no-store" });
    if (!answer.ok) return;
    const { versions } = await answer.json();
    const section = document.createElement("section");
    section.id = "versions";
    const title = document.createElement("h2");
    title.textContent = "Versions";
    const table = document.createElement("table");
    const head = table.createTHead().insertRow();
    for (const label of ["version", "matches", "wins", "points / match", "faults", "μ", "σ"]) {
      const cell = document.createElement("th");
      cell.scope = "col";
      cell.textContent = label;
      head.appendChild(cell);
    }
    const body = table.createTBody();
    versions.forEach((version, number) => {
      const row = body.insertRow();
      const label = number === 0 ? `${version.version} (playing now)` : version.version;
      const rating = (value) => (value === null || value === undefined ? "—" : value.toFixed(1));
      const values = [label, version.matches, version.wins, version.mean_points ?? "—", version.faults];
      for (const value of [...values, rating(version.mu), rating(version.sigma)]) {
        row.insertCell().textContent = String(value);
      }
    });
    document.getElementById("versions")?.remove();
    section.append(title, table);
    document.querySelector("main").prepend(section);
  }

  // Each remote entrant's bot, connected now or away (its matches wait for it), by name: read once,
  // then followed through the `connection` events, and marked beside its name on every refresh.
  let presence = {};

  async function loadPresence() {
    const answer = await fetch("/api/v1/entrants", { cache: "no-store" });
    if (!answer.ok) return;
    const { entrants } = await answer.json();
    presence = Object.fromEntries(entrants.filter((e) => e.kind === "remote").map((e) => [e.name, e.connected]));
    showPresence();
  }

  function mark(anchor, name, inside) {
    if (!(name in presence)) return;
    let badge = inside ? anchor.querySelector(".presence") : anchor.nextElementSibling;
    if (!badge?.classList.contains("presence")) {
      badge = document.createElement("span");
      if (inside) anchor.prepend(badge);
      else anchor.after(badge);
    }
    const up = presence[name];
    badge.className = `badge presence ${up ? "connected" : "away"}`;
    badge.textContent = up ? "connected" : "away";
    badge.title = up ? "its bot is connected to the arena now" : "its bot is not connected now: its matches wait for it";
  }

  function showPresence() {
    for (const badge of document.querySelectorAll(".badge.remote[data-entrant]")) mark(badge, badge.dataset.entrant, false);
    const status = document.querySelector("main p.status");
    if (page.startsWith("entrant-") && status) mark(status, entrantName, true);
  }

  const entrantName = page.startsWith("entrant-") ? document.querySelector("h1").textContent.trim() : "";
  const events = new EventSource("/api/v1/events");
  let opened = 0;
  events.addEventListener("open", () => {
    if (opened++) refresh(); // back after a drop: catch up on what was missed
  });
  events.addEventListener("pages", refresh);
  events.addEventListener("match_finished", showInPlay);
  events.addEventListener("league", () => (waiting ? location.reload() : refresh()));
  events.addEventListener("match_started", showInPlay);
  events.addEventListener("connection", (event) => {
    const { name, connected } = JSON.parse(event.data);
    presence[name] = connected;
    showPresence();
  });
  if (waiting) setInterval(() => location.reload(), 5000);
  showInPlay();
  showVersions();
  loadPresence();
})();
