// Session pages: the experimenter's countdown, the SHS progress, saving each
// SHS answer as it is given, and no Enter posting the consent or prompt forms.
(function () {
  "use strict";

  function pad(n) { return (n < 10 ? "0" : "") + n; }

  var countdown = document.querySelector(".countdown[data-entered]");
  if (countdown) {
    var entered = Date.parse(countdown.dataset.entered);
    var target = parseInt(countdown.dataset.target, 10);
    var tick = function () {
      var left = Math.round(target - (Date.now() - entered) / 1000);
      var abs = Math.abs(left);
      var text = Math.floor(abs / 60) + ":" + pad(abs % 60);
      var label = left >= 0 ? countdown.dataset.labelLeft : countdown.dataset.labelOver;
      countdown.textContent = label.replace("{time}", text);
      countdown.classList.toggle("overrun", left < 0);
    };
    tick();
    setInterval(tick, 1000);
  }

  // Where each submit button says something (consent, a prompt's category),
  // Enter in a field must not post the form: only a press of a button does
  // (templates/surveys/session/_enter_guard.html is the fallback without us).
  document.querySelectorAll("form[data-press-to-submit]").forEach(function (guarded) {
    guarded.addEventListener("keydown", function (event) {
      var field = event.target;
      if (event.key === "Enter" && field.tagName === "INPUT") { event.preventDefault(); }
    });
  });

  var form = document.getElementById("shs-form");
  if (form) {
    var progress = document.getElementById("shs-progress");
    var items = form.querySelectorAll("fieldset.question").length;
    var showProgress = function () {
      if (!progress) { return; }
      var answered = form.querySelectorAll("input[type=radio]:checked").length;
      progress.textContent = progress.dataset.template
        .replace("{answered}", String(answered)).replace("{total}", String(items));
    };
    form.addEventListener("change", showProgress);
  }
  if (form && window.fetch) {
    var status = form.querySelector(".autosave-status");
    var token = form.querySelector("input[name=csrfmiddlewaretoken]").value;
    var step = form.querySelector("input[name=step]").value;
    // Every save carries a number larger than any before it, also across a
    // reload (hence the clock): the server keeps an item's answer only from
    // a save newer than the stored one, so out-of-order arrivals never
    // leave an older answer behind.
    var sequence = 0;
    var latest = 0;
    form.addEventListener("change", function (event) {
      var input = event.target;
      if (input.type !== "radio") { return; }
      sequence = Math.max(sequence + 1, Date.now());
      var sent = sequence;
      latest = sent;
      var body = new URLSearchParams({
        item: input.name, value: input.value, step: step, sequence: String(sent)
      });
      fetch(form.dataset.autosaveUrl, {
        method: "POST",
        headers: { "X-CSRFToken": token },
        body: body,
        credentials: "same-origin"
      }).then(function (response) {
        if (status && sent === latest) {
          status.textContent = response.ok ? status.dataset.saved : status.dataset.failed;
        }
        var fieldset = document.getElementById("fieldset-" + input.name);
        if (fieldset && response.ok) { fieldset.classList.remove("has-errors"); }
      }).catch(function () {
        if (status && sent === latest) { status.textContent = status.dataset.failed; }
      });
    });
  }
})();
