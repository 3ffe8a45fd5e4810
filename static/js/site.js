// Progressive enhancement only: every page works without JavaScript.
(function () {
  "use strict";
  // Language switcher and similar selects submit on change.
  document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
    select.addEventListener("change", function () { select.form.submit(); });
    var button = select.form.querySelector("button[type=submit]");
    if (button) { button.hidden = true; }
  });
})();
