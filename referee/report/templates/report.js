// The script of every page: sorting by a column header, and the chart legend below. Nothing depends on
// it to be read.
document.querySelectorAll("table.sortable").forEach((table) => {
  const headers = table.querySelectorAll("thead th");
  headers.forEach((header, column) => {
    header.tabIndex = 0;
    const sort = () => {
      const ascending = header.getAttribute("aria-sort") !== "ascending";
      headers.forEach((h) => h.removeAttribute("aria-sort"));
      header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      const numeric = header.dataset.type === "number";
      const value = (row) => {
        const text = row.children[column].textContent.trim();
        return numeric ? parseFloat(text.replace("%", "").replace("−", "-")) || 0 : text.toLowerCase();
      };
      const body = table.tBodies[0];
      const rows = [...body.rows].sort((a, b) => {
        const [x, y] = [value(a), value(b)];
        return (x < y ? -1 : x > y ? 1 : 0) * (ascending ? 1 : -1);
      });
      rows.forEach((row) => body.appendChild(row));
    };
    header.addEventListener("click", sort);
    header.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        sort();
      }
    });
  });
});

// The chart's legend toggles its lines; hovering or focusing a name shows that line's ±3σ band.
// Without this script the legend is a plain list and every line shows.
document.querySelectorAll("ul.legend[data-chart]").forEach((legend) => {
  const chart = document.getElementById(legend.dataset.chart);
  legend.querySelectorAll("li[data-line]").forEach((item) => {
    const line = chart.querySelector(`g.entrant[data-line="${item.dataset.line}"]`);
    const button = document.createElement("button");
    button.type = "button";
    button.setAttribute("aria-pressed", "true");
    button.title = "show or hide this line";
    button.append(...item.childNodes);
    item.append(button);
    button.addEventListener("click", () => {
      const on = button.getAttribute("aria-pressed") !== "true";
      button.setAttribute("aria-pressed", String(on));
      line.classList.toggle("off", !on);
    });
    const choose = (chosen) => () => line.classList.toggle("chosen", chosen);
    button.addEventListener("mouseenter", choose(true));
    button.addEventListener("mouseleave", choose(false));
    button.addEventListener("focus", choose(true));
    button.addEventListener("blur", choose(false));
  });
});
