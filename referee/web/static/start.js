// The play page: sit down at a new table against the chosen entrants.
document.getElementById("start").addEventListener("submit", async (event) => {
  event.preventDefault();
  const problem = document.getElementById("start-problem");
  problem.textContent = "";
  const opponents = [...document.querySelectorAll("select.opponent")].map((select) => select.value);
  const name = document.getElementById("name").value;
  const answer = await fetch("/api/v1/human", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ opponents, name }),
  });
  const data = await answer.json();
  if (answer.ok) location.assign(data.table);
  else problem.textContent = data.error;
});
