/* sitegen: the search page's script (a file, so a strict Content-Security-Policy holds).
   The index is in shards (one Pagefind bundle each, under the bundle folder): shards.json
   lists each language's shards, the language with the most pages first. This starts
   Pagefind's UI (pagefind-ui.js, loaded before this file) in #search on the first shard of
   the page's <html lang> and merges the others (Pagefind's mergeIndex: results of all
   shards ranked together), with the bundle's folder and the site's base path from the
   element's data- attributes, and runs the query of a `?q=` link. Each shard scores its
   pages by its own statistics, and one without the word offers near matches (known words
   the word begins with: "in" for "infrastructure"): a high termSimilarity keeps those far
   below any exact match, and the title's metadata weighs nothing (near matches in it
   escape that penalty; the themes index the title as the page's heading instead), so a
   word found in one shard ranks first as it would in one index. Pagefind labels its box
   with a title only: the page's visible heading labels it instead. */
(function () {
  "use strict";
  var element = document.getElementById("search");
  if (!element || typeof window.PagefindUI !== "function") {
    return;
  }
  var bundle = element.getAttribute("data-bundle");

  var shardsOf = function (listed) {
    var languages = (listed && listed.languages) || {};
    var lang = (document.documentElement.lang || "").toLowerCase();
    var found = languages[lang] || languages[lang.split("-")[0]];
    if (!found) {
      var first = Object.keys(languages)[0];
      found = first ? languages[first] : null;
    }
    return found && found.shards && found.shards.length ? found.shards : null;
  };

  var label = function () {
    var input = element.querySelector("input");
    if (input) {
      input.setAttribute("aria-labelledby", "search-title");
    }
    return Boolean(input);
  };

  // (each merged index takes its own options)
  var ranking = { termSimilarity: 10, metaWeights: { title: 0 } };

  var start = function (shards) {
    var options = {
      element: "#search",
      bundlePath: shards ? bundle + shards[0] + "/" : bundle,
      baseUrl: element.getAttribute("data-base"),
      showImages: false,
      showSubResults: false,
      autofocus: true,
      ranking: ranking
    };
    if (shards && shards.length > 1) {
      options.mergeIndex = shards.slice(1).map(function (shard) {
        return { bundlePath: bundle + shard + "/", ranking: ranking };
      });
    }
    var ui = new window.PagefindUI(options);
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
  };

  fetch(bundle + "shards.json")
    .then(function (response) {
      return response.ok ? response.json() : null;
    })
    .catch(function () {
      return null;
    })
    .then(function (listed) {
      start(shardsOf(listed));
    });
})();
