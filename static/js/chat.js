// The built-in chat of a connected block (docs/design/transcripts.md §10.3).
//
// Without this script every chat form posts normally and the page comes back
// with the answer. With it, the message and retry forms ask for the answer as
// a stream of JSON lines ({"delta"}, then {"done"} or {"error"}) and show it
// as it arrives; the last line brings the turns as the server stored them,
// which replace the ones drawn here, so the tag buttons and the retry are the
// server's own, and the block's counters ("Messages", "Still needed"), which
// are put in place of the page's.
// The typed message stays in its box until the server has accepted it.
(function () {
  "use strict";

  var panel = document.getElementById("chat");
  if (!panel || !window.fetch || !window.TextDecoder || !window.ReadableStream) return;

  var busy = false;

  panel.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.hasAttribute("data-chat-stream")) return; // tagging posts normally
    event.preventDefault();
    if (!busy) send(form);
  });

  panel.addEventListener("keydown", function (event) {
    // Enter sends, Shift+Enter starts a new line (as in the chat interfaces people know).
    if (event.target.id === "chat-text" && event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      var form = event.target.form;
      if (form.reportValidity()) form.requestSubmit();
    }
  });

  function turn(role, text) {
    var item = document.createElement("li");
    item.className = "turn turn-" + role;
    var body = document.createElement("div");
    body.className = "turn-text";
    body.dir = "auto"; // a model's bidirectional controls stay inside its turn
    body.textContent = text;
    item.appendChild(body);
    panel.querySelector(".chat-turns").appendChild(item);
    return item;
  }

  function setBusy(on) {
    busy = on;
    panel.setAttribute("aria-busy", on ? "true" : "false");
    panel.querySelector(".chat-status").textContent = on ? panel.dataset.sending : "";
    panel.querySelectorAll("form[data-chat-stream] button").forEach(function (button) {
      button.disabled = on;
    });
  }

  function showError(answer, message) {
    var alert = document.createElement("p");
    alert.className = "message error";
    alert.setAttribute("role", "alert");
    alert.textContent = message;
    answer.className = "turn turn-error";
    answer.appendChild(alert);
  }

  async function readLines(response, onEvent) {
    var reader = response.body.getReader();
    var decoder = new TextDecoder();
    var buffer = "";
    for (;;) {
      var chunk = await reader.read();
      if (chunk.done) break;
      buffer += decoder.decode(chunk.value, { stream: true });
      var end;
      while ((end = buffer.indexOf("\n")) >= 0) {
        var line = buffer.slice(0, end);
        buffer = buffer.slice(end + 1);
        if (line) onEvent(JSON.parse(line));
      }
    }
  }

  async function send(form) {
    var box = form.querySelector("textarea");
    if (box && !box.value.trim()) return;
    setBusy(true);
    var drawn = []; // what this script drew, swapped for the server's turns at the end
    if (box) drawn.push(turn("user", box.value.trim()));
    var answer = turn("assistant", "");
    drawn.push(answer);
    answer.setAttribute("aria-busy", "true");
    var text = answer.querySelector(".turn-text");
    var failed = null;
    var accepted = false;
    var stored = null; // the turns as stored, and the retry, sent with the last line
    try {
      var response = await fetch(form.action, {
        method: "POST",
        body: new FormData(form),
        headers: { Accept: "application/x-ndjson" },
        credentials: "same-origin",
      });
      if (!response.ok || !response.body) {
        var refusal = await response.json().catch(function () { return {}; });
        failed = refusal.error || panel.dataset.networkError;
      } else {
        accepted = true; // the message is stored: its box can be emptied
        await readLines(response, function (event) {
          // Appended, not concatenated: a long answer stays linear to draw.
          if (event.delta) text.appendChild(document.createTextNode(event.delta));
          if (event.error) failed = event.error;
          if (event.stored) stored = event.stored;
        });
      }
    } catch (error) {
      failed = failed || panel.dataset.networkError;
    }
    answer.removeAttribute("aria-busy");
    if (accepted && box) box.value = "";
    if (failed) showError(answer, failed);
    setBusy(false);
    if (stored) swap(drawn, stored);
    else if (accepted) await refresh();
  }

  function swap(drawn, stored) {
    // The stored turns, with their tag forms, and the retry, as the server shows them.
    drawn.forEach(function (item) { item.remove(); });
    var list = panel.querySelector(".chat-turns");
    var fresh = document.createElement("template");
    fresh.innerHTML = stored.turns;
    Array.prototype.slice.call(fresh.content.children).forEach(function (item) {
      // A retried message is already on the page: it is replaced where it
      // stands (answered now, it has its tag form); a new turn goes last.
      var shown = item.id && document.getElementById(item.id);
      if (shown) shown.replaceWith(item);
      else list.appendChild(item);
    });
    var retry = panel.querySelector(".retry-form");
    if (retry) retry.remove();
    if (stored.retry) panel.querySelector(".compose-form").insertAdjacentHTML("beforebegin", stored.retry);
    if (stored.progress) showProgress(stored.progress);
  }

  function showProgress(progress) {
    // The block's counters and what it still lacks, as the server counted
    // them after this answer: the participant need not reload to see them.
    document.querySelectorAll("[data-progress]").forEach(function (element) {
      var value = progress[element.dataset.progress];
      if (value !== undefined) element.textContent = value;
    });
    document.querySelectorAll("[data-progress-warning]").forEach(function (warning) {
      warning.hidden = !progress.missing;
    });
  }

  async function refresh() {
    // No stored turns came (the session ended meanwhile): the page as the server has it.
    try {
      var response = await fetch(window.location.pathname, { credentials: "same-origin" });
      var page = new DOMParser().parseFromString(await response.text(), "text/html");
      var fresh = page.getElementById("chat");
      if (!fresh) return;
      var typed = panel.querySelector("#chat-text").value;
      panel.innerHTML = fresh.innerHTML;
      panel.querySelector("#chat-text").value = typed;
    } catch (error) {
      // The streamed answer stays on the page; a reload shows the stored turns.
    }
  }
})();
