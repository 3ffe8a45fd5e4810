// Copy buttons beside read-only links (staff pages). Without JavaScript the
// buttons stay hidden and the field's text can be selected and copied by hand.
(function () {
  "use strict";
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    var field = document.getElementById(button.dataset.copy);
    var label = button.textContent;
    button.hidden = false;
    button.addEventListener("click", function () {
      field.select();
      var done = function () {
        button.textContent = button.dataset.copied;
        window.setTimeout(function () { button.textContent = label; }, 2000);
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(field.value).then(done, function () {
          if (document.execCommand("copy")) { done(); }
        });
      } else if (document.execCommand("copy")) {
        done();
      }
    });
  });
})();
