/* sitegen: the visitor's choice of light or dark colours (a file, so a strict
   Content-Security-Policy holds). Loaded in <head> without `defer`: it runs before the body
   is drawn and puts a remembered choice on <html data-scheme>, so a page never flashes the
   other scheme. Once the page is read, it shows the header's switch (hidden without
   JavaScript: the system's scheme then applies, through the stylesheet's
   prefers-color-scheme) and remembers each switch in localStorage. */
(function () {
  "use strict";
  var KEY = "sitegen-scheme";
  var root = document.documentElement;
  var stored = null;
  try {
    stored = window.localStorage.getItem(KEY);
  } catch (error) {  // (storage off: the system's scheme)
    stored = null;
  }
  if (stored === "light" || stored === "dark") {
    root.setAttribute("data-scheme", stored);
  }
  var dark = function () {
    var chosen = root.getAttribute("data-scheme");
    if (chosen) {
      return chosen === "dark";
    }
    return !!(window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches);
  };
  document.addEventListener("DOMContentLoaded", function () {
    var button = document.getElementById("scheme-switch");
    if (!button) {
      return;
    }
    var show = function () { button.setAttribute("aria-pressed", dark() ? "true" : "false"); };
    button.addEventListener("click", function () {
      var next = dark() ? "light" : "dark";
      root.setAttribute("data-scheme", next);
      try {
        window.localStorage.setItem(KEY, next);
      } catch (error) {  // (not remembered, but switched)
        next = null;
      }
      show();
    });
    show();
    button.hidden = false;
  });
})();
