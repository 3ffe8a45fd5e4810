// SHS calculator, live results: progressive enhancement of the plain form.
// Without JavaScript the form posts and the page comes back with the result;
// with it, every change posts the same form in the background and the same
// server-rendered result fragment replaces the result section.
(function () {
  "use strict";
  var form = document.getElementById("shs-calculator");
  var result = document.getElementById("shs-result");
  if (!form || !result || !window.fetch || !window.FormData) { return; }
  var progress = document.getElementById("shs-progress");
  var items = form.querySelectorAll("fieldset[data-item]");
  var latest = 0;

  function answered() {
    var count = 0;
    items.forEach(function (item) {
      if (item.querySelector("input:checked")) { count += 1; }
    });
    return count;
  }

  function showProgress(count) {
    if (!progress) { return; }
    progress.textContent = progress.getAttribute("data-template")
      .replace("{answered}", String(count))
      .replace("{total}", String(items.length));
  }

  function update() {
    var count = answered();
    showProgress(count);
    if (count < items.length) { return; }
    var request = ++latest;
    fetch(form.action, {
      method: "POST",
      body: new FormData(form),
      credentials: "same-origin",
      headers: { "X-Requested-With": "shs-calculator" }
    }).then(function (response) {
      if (!response.ok) { throw new Error("HTTP " + response.status); }
      return response.text();
    }).then(function (html) {
      // Answers can change faster than the server replies: keep the newest.
      if (request === latest) { result.innerHTML = html; }
    }).catch(function () {
      // The Calculate button still submits the form the ordinary way.
    });
  }

  // Choosing another language reloads the page in it through the form's own
  // "change language" button, so the answers chosen so far come along.
  var language = document.getElementById("shs-language");
  var switcher = form.querySelector("button[name=switch_language]");

  form.addEventListener("change", function (event) {
    if (event.target === language && switcher) {
      if (form.requestSubmit) { form.requestSubmit(switcher); } else { switcher.click(); }
      return;
    }
    update();
  });
  // Browsers restore checked radios after "back"; show their result at once.
  if (answered() > 0) { update(); } else { showProgress(0); }
})();
