// The study monitor refreshes its figures in place every 10 seconds.
(function () {
  "use strict";
  var live = document.getElementById("monitor-live");
  if (!live || !window.fetch) { return; }
  setInterval(function () {
    fetch(live.dataset.fragmentUrl, { credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) { if (html) { live.innerHTML = html; } })
      .catch(function () {});
  }, 10000);
})();
