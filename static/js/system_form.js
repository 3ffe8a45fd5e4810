// The system form: choosing a server preset fills in the fields left alone,
// as the form's clean() does on the server (surveys/system_presets.py), so
// the coordinator sees the values before saving. Without JavaScript the
// server fills them in on save.
(function () {
  "use strict";
  var data = document.getElementById("server-presets");
  var select = document.getElementById("id_server_preset");
  if (!data || !select) return;
  var presets = JSON.parse(data.textContent);
  var defaults = { token_parameter: "max_tokens", stream_usage: true,
                   idle_timeout_seconds: null, answer_timeout_seconds: null };
  var previous = select.value;

  function read(field) {
    if (field.type === "checkbox") return field.checked;
    return field.value === "" ? null : (field.type === "number" ? Number(field.value) : field.value);
  }
  function write(field, value) {
    if (field.type === "checkbox") field.checked = value;
    else field.value = value === null ? "" : String(value);
  }

  select.addEventListener("change", function () {
    var before = presets[previous] || {};
    var chosen = presets[select.value] || {};
    Object.keys(chosen).forEach(function (name) {
      var field = document.getElementById("id_" + name);
      if (!field) return;
      var value = read(field);
      if (value === defaults[name] || (name in before && value === before[name])) {
        write(field, chosen[name]);
      }
    });
    previous = select.value;
  });
})();
