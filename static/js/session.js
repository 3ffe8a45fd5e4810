// Session pages: the step's countdown, and saving each SHS answer as it is given.
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

  var form = document.getElementById("shs-form");
  if (form && window.fetch) {
    var status = form.querySelector(".autosave-status");
    var token = form.querySelector("input[name=csrfmiddlewaretoken]").value;
    var step = form.querySelector("input[name=step]").value;
    form.addEventListener("change", function (event) {
      var input = event.target;
      if (input.type !== "radio") { return; }
      var body = new URLSearchParams({ item: input.name, value: input.value, step: step });
      fetch(form.dataset.autosaveUrl, {
        method: "POST",
        headers: { "X-CSRFToken": token },
        body: body,
        credentials: "same-origin"
      }).then(function (response) {
        if (status) { status.textContent = response.ok ? status.dataset.saved : status.dataset.failed; }
        var fieldset = document.getElementById("fieldset-" + input.name);
        if (fieldset && response.ok) { fieldset.classList.remove("has-errors"); }
      }).catch(function () {
        if (status) { status.textContent = status.dataset.failed; }
      });
    });
  }
})();
