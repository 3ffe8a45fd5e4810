// The retest slip's print button (progressive enhancement: without
// JavaScript the button stays hidden and the browser's print command works).
(function () {
  "use strict";
  document.querySelectorAll("button[data-print]").forEach(function (button) {
    button.addEventListener("click", function () { window.print(); });
    button.hidden = false;
  });
})();
