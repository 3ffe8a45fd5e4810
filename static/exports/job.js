// Keeps an export job's progress bar current until the job finishes, then
// reloads the page to show the download link or the error. Without
// JavaScript the page still works: it shows a Refresh link.
(function () {
  "use strict";
  var box = document.getElementById("export-status");
  if (!box || box.dataset.finished === "1") { return; }
  var url = box.dataset.statusUrl;
  var bar = box.querySelector("[data-role=progress]");
  var text = box.querySelector("[data-role=progress-text]");
  var label = box.querySelector("[data-role=status-label]");
  var delay = 1000;

  function poll() {
    fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) { throw new Error("status " + response.status); }
        return response.json();
      })
      .then(function (job) {
        if (bar) { bar.value = job.progress; bar.textContent = job.progress + "%"; }
        if (text) { text.textContent = job.progress; }
        if (label) { label.textContent = job.status_label; }
        if (job.finished) { window.location.reload(); return; }
        delay = 1000;
        window.setTimeout(poll, delay);
      })
      .catch(function () {
        // Back off while the server is unreachable instead of hammering it.
        delay = Math.min(delay * 2, 15000);
        window.setTimeout(poll, delay);
      });
  }
  window.setTimeout(poll, delay);
})();
