/* sitegen: the search page's script (a file, so a strict Content-Security-Policy holds).
   Starts Pagefind's UI (pagefind-ui.js, loaded before this file) in #search, with the
   bundle's folder and the site's base path from the element's data- attributes, and runs
   the query of a `?q=` link. Pagefind loads the index of the page's <html lang>. */
(function () {
  "use strict";
  var element = document.getElementById("search");
  if (!element || typeof window.PagefindUI !== "function") {
    return;
  }
  var ui = new window.PagefindUI({
    element: "#search",
    bundlePath: element.getAttribute("data-bundle"),
    baseUrl: element.getAttribute("data-base"),
    showImages: false,
    showSubResults: false,
    autofocus: true
  });
  var query = new URLSearchParams(window.location.search).get("q");
  if (query) {
    ui.triggerSearch(query);
  }
})();
