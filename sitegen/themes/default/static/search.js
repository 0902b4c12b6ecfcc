/* sitegen: the search page's script (a file, so a strict Content-Security-Policy holds).
   Starts Pagefind's UI (pagefind-ui.js, loaded before this file) in #search, with the
   bundle's folder and the site's base path from the element's data- attributes, and runs
   the query of a `?q=` link. Pagefind labels its box with a title only: the page's visible
   heading labels it instead. Pagefind loads the index of the page's <html lang>. */
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
  var label = function () {
    var input = element.querySelector("input");
    if (input) {
      input.setAttribute("aria-labelledby", "search-title");
    }
    return Boolean(input);
  };
  if (!label()) {
    new MutationObserver(function (changes, observer) {
      if (label()) {
        observer.disconnect();
      }
    }).observe(element, { childList: true, subtree: true });
  }
  var query = new URLSearchParams(window.location.search).get("q");
  if (query) {
    ui.triggerSearch(query);
  }
})();
