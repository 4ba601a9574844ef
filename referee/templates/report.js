// Sorting by a column header: the only script, and nothing depends on it to be read.
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
        return numeric ? parseFloat(text.replace("%", "")) || 0 : text.toLowerCase();
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
