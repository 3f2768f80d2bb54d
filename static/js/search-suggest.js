// The header's search suggests as people type: after a short pause, what /api/search/ finds for the text so far
// (exact codes first, then names, labels and serials that start with it or contain it), as links under the
// field. Enter still submits the form (the search page); Escape or a click elsewhere closes the list.
(function () {
  const form = document.querySelector("form.search[data-project]");
  if (!form) return;
  const input = form.querySelector("input[name=q]");
  const list = document.createElement("ul");
  list.className = "suggestions";
  list.id = "search-suggestions";
  list.setAttribute("role", "listbox");
  list.hidden = true;
  form.appendChild(list);
  input.setAttribute("aria-controls", list.id);
  let timer = null;
  let asked = "";

  function close() {
    list.hidden = true;
    list.replaceChildren();
  }

  function show(matches) {
    list.replaceChildren();
    for (const match of matches) {
      const item = document.createElement("li");
      const link = document.createElement("a");
      link.href = match.url;
      link.setAttribute("role", "option");
      link.textContent = match.label;
      const how = document.createElement("small");
      how.textContent = ` ${match.kind.replace("_", " ")} · ${match.how}`;
      link.appendChild(how);
      item.appendChild(link);
      list.appendChild(item);
    }
    list.hidden = matches.length === 0;
  }

  async function suggest() {
    const text = input.value.trim();
    if (text.length < 2) return close();
    asked = text;
    const params = new URLSearchParams({ project: form.dataset.project, q: text });
    try {
      const answer = await fetch(`/api/search/?${params}`, { headers: { Accept: "application/json" } });
      if (!answer.ok || asked !== text) return;
      show((await answer.json()).matches || []);
    } catch (error) {
      close(); // offline or refused: the form still works
    }
  }

  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(suggest, 250);
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Escape") close();
  });
  document.addEventListener("click", (event) => {
    if (!form.contains(event.target)) close();
  });
})();
