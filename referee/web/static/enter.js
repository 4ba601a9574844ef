// The entry page: enter a remote entrant, or rotate its token. Each token is set as text into the page
// from the answer to the write: it is never in the page's source, and leaving the page forgets it.
const door = JSON.parse(document.getElementById("door").textContent);

async function post(url, body) {
  const answer = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    cache: "no-store",
  });
  let data = {};
  try {
    data = await answer.json();
  } catch {
    data = { error: `the server answered ${answer.status}` };
  }
  return { ok: answer.ok, data };
}

document.getElementById("enter").addEventListener("submit", async (event) => {
  event.preventDefault();
  const problem = document.getElementById("enter-problem");
  problem.textContent = "";
  const body = { name: document.getElementById("name").value };
  const invite = document.getElementById("invite");
  if (invite) body.invite = invite.value.trim();
  const { ok, data } = await post("/api/v1/entries", body);
  if (!ok) {
    problem.textContent = data.error;
    return;
  }
  document.getElementById("entered-name").textContent = data.name;
  document.getElementById("token").textContent = data.token;
  document.getElementById("door-address").textContent = data.address || door.address || "";
  document.getElementById("file-name").textContent = data.name;
  document.getElementById("tls-line").hidden = !(data.tls ?? door.tls);
  document.getElementById("entered").hidden = false;
  document.getElementById("enter").hidden = true;
  if (invite) invite.value = "";
});

document.getElementById("rotate").addEventListener("submit", async (event) => {
  event.preventDefault();
  const problem = document.getElementById("rotate-problem");
  problem.textContent = "";
  const name = document.getElementById("rotate-name").value;
  const current = document.getElementById("current");
  const { ok, data } = await post(`/api/v1/entrants/${encodeURIComponent(name)}/token`, {
    token: current.value.trim(),
  });
  current.value = "";
  if (!ok) {
    problem.textContent = data.error;
    return;
  }
  document.getElementById("new-token").textContent = data.token;
  document.getElementById("rotated").hidden = false;
});
