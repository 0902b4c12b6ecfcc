/* sitegen: the search page's script (a file, so a strict Content-Security-Policy holds).
   It enables the page's search box (disabled without JavaScript, where the page says
   search needs it) and searches as one types, or the query of a `?q=` link, through
   Pagefind's JS API (the shard's pagefind.js). The index is in shards (one Pagefind bundle
   each, under the form's data-bundle folder): shards.json lists each language's shards,
   the language with the most pages first. The whole site is searched, the page's own
   <html lang> first: each language is one Pagefind instance (of its first shard, all made
   by the own language's pagefind.js; its other shards merged: mergeIndex, results of all
   its shards ranked together, words stemmed by that language's rules), and the results of the page's language come first,
   drawn as soon as they are found, then each other language's, added below them, each
   marked with its `lang` (the list is aria-busy until all have answered). The other
   languages' bundles are fetched only once the own language has answered (or is ready, on
   a page opened without a query), so on a slow line they do not delay its results. Each
   shard scores its pages by its own statistics, and one without the word offers near
   matches (known words the word begins with: "in" for "infrastructure"): a high
   termSimilarity keeps those far below any exact match, and the title's metadata weighs
   nothing (near matches in it escape that penalty; the themes index the title as the
   page's heading instead), so a word found in one shard ranks first as it would in one
   index.
   Results are drawn in one step, a batch at a time, into the region the page reserves
   (no layout shift): each title a heading link, its excerpt below without the title
   (the indexed text begins with the heading, so an excerpt of its first words repeats
   it). An excerpt is Pagefind's text with <mark> around the words found; it is read
   into inert nodes, and only its text and marks are kept. */
(function () {
  "use strict";
  var form = document.getElementById("search-form");
  var input = document.getElementById("search-input");
  var status = document.getElementById("search-status");
  var list = document.getElementById("search-results");
  var more = document.getElementById("search-more");
  if (!form || !input || !status || !list || !more || !window.fetch || !window.DOMParser) {
    return;
  }
  // (absolute: Pagefind's worker resolves the index's URLs against its own)
  var bundle = new URL(form.getAttribute("data-bundle"), document.baseURI).href;
  var base = form.getAttribute("data-base");
  var lang = document.documentElement.lang || "en";
  var BATCH = 10;
  // (each merged index takes its own options)
  var ranking = { termSimilarity: 10, metaWeights: { title: 0 } };
  var plural = window.Intl && Intl.PluralRules ? new Intl.PluralRules(lang) : null;
  var WORD = /[\p{L}\p{N}]+/gu;

  var message = function (name, values) {
    var text = form.getAttribute("data-" + name) || "";
    return text.replace(/\{(\w+)\}/g, function (whole, key) {
      return Object.prototype.hasOwnProperty.call(values, key) ? values[key] : whole;
    });
  };

  // Each language's shards, the page's own language first, then the others in the
  // order shards.json lists them (the most pages first).
  var languagesOf = function (listed) {
    var languages = (listed && listed.languages) || {};
    var code = lang.toLowerCase();
    var own = languages[code] ? code : (languages[code.split("-")[0]] ? code.split("-")[0] : null);
    var codes = Object.keys(languages).filter(function (name) {
      var shards = languages[name].shards;
      return name !== own && shards && shards.length;
    });
    if (own && languages[own].shards && languages[own].shards.length) {
      codes.unshift(own);
    }
    return codes.map(function (name) { return { lang: name, shards: languages[name].shards }; });
  };

  // One Pagefind instance per language, its first shard's, the language's other shards
  // merged into it. Every instance comes from one module, the own language's first shard's
  // pagefind.js (`createInstance`, Pagefind 1.5), so the page loads one pagefind.js and one
  // worker script (~90 KB), not one of each per language; a Pagefind without
  // `createInstance` has each language import its own.
  var engine = function (module, language) {
    var first = bundle + language.shards[0] + "/";
    var made = module.createInstance ?
      Promise.resolve(module.createInstance({ basePath: first })) :
      import(first + "pagefind.js");
    return made.then(function (pagefind) {
      var ready = pagefind.options({ baseUrl: base, ranking: ranking });
      language.shards.slice(1).forEach(function (shard) {
        ready = ready.then(function () {
          return pagefind.mergeIndex(bundle + shard + "/", {
            baseUrl: base, ranking: ranking, language: language.lang });
        });
      });
      return ready.then(function () { return { lang: language.lang, pagefind: pagefind }; });
    });
  };

  // {own, others}: the page's own language's instance (a promise), loaded at once, and a
  // function that starts loading the other languages' (promises) the first time it is
  // called. The others wait until the own language has answered (or, on a page opened
  // without a query, until it is ready): their bundles (a pagefind.js and a WebAssembly
  // file each, ~120 KB) would otherwise share a phone's bandwidth with the own language's,
  // and its first results, the page's largest paint, would come ~1 s later.
  var loading = null;
  var load = function () {
    if (loading === null) {
      loading = fetch(bundle + "shards.json")
        .then(function (response) { return response.ok ? response.json() : null; })
        .catch(function () { return null; })
        .then(function (listed) {
          var languages = languagesOf(listed);
          if (!languages.length) {  // (no shards.json: one bundle at the root)
            var one = import(bundle + "pagefind.js").then(function (pagefind) {
              return pagefind.options({ baseUrl: base, ranking: ranking })
                .then(function () { return { lang: lang, pagefind: pagefind }; });
            });
            return { own: one, others: function () { return []; } };
          }
          var module = import(bundle + languages[0].shards[0] + "/pagefind.js");
          var start = function (language) {
            return module.then(function (loaded) { return engine(loaded, language); });
          };
          var later = null;
          return {
            own: start(languages[0]),
            others: function () {
              if (later === null) {
                later = languages.slice(1).map(start);  // (each loads on its own)
              }
              return later;
            }
          };
        });
    }
    return loading;
  };

  // The excerpt's pieces ({text, mark}) from Pagefind's HTML, parsed inert.
  var pieces = function (html) {
    var body = new DOMParser().parseFromString(html || "", "text/html").body;
    return Array.prototype.map.call(body.childNodes, function (node) {
      return { text: node.textContent || "", mark: node.nodeName === "MARK" };
    });
  };

  // How many characters of the excerpt's text are the title's: the indexed text begins
  // with the title (the page's heading), and an excerpt of its first words holds all or the
  // end of it ("… Jar of Sauerkraut." of "Your First Jar of Sauerkraut").
  var titled = function (text, title, content) {
    var whole = (content || "").replace(/\s+/g, " ").trim();
    var head = title.replace(/\s+/g, " ").trim();
    var start = whole.indexOf(text.replace(/\s+/g, " ").trim());
    if (head && whole.indexOf(head) === 0 && start >= 0) {
      return Math.max(0, head.length - start);
    }
    var words = head.toLowerCase().match(WORD) || [];  // (no content: the words alone)
    WORD.lastIndex = 0;
    var end = 0;
    for (var i = 0; i < words.length; i += 1) {
      var found = WORD.exec(text);
      if (!found || found[0].toLowerCase() !== words[i]) {
        WORD.lastIndex = 0;
        return 0;
      }
      end = WORD.lastIndex;
    }
    WORD.lastIndex = 0;
    return end;
  };

  // The pieces without the title's part, and the punctuation after it.
  var withoutTitle = function (parts, title, content) {
    var text = parts.map(function (part) { return part.text; }).join("");
    var end = titled(text.replace(/^\s+/, ""), title, content);
    if (!end) {
      return parts;
    }
    end += text.length - text.replace(/^\s+/, "").length;
    while (end < text.length && !/[\p{L}\p{N}]/u.test(text[end])) {
      end += 1;
    }
    var kept = [];
    parts.forEach(function (part) {
      var cut = Math.min(end, part.text.length);
      end -= cut;
      if (part.text.length > cut) {
        kept.push({ text: part.text.slice(cut), mark: part.mark });
      }
    });
    return kept;
  };

  var result = function (data, language) {
    var title = (data.meta && data.meta.title) || data.url;
    var item = document.createElement("li");
    item.className = "search-result";
    if (language !== lang.toLowerCase()) {  // (another language's page: said so, WCAG 3.1.2)
      item.lang = language;
    }
    var heading = document.createElement("h2");
    heading.className = "search-result__title";
    var link = document.createElement("a");
    link.className = "search-result__link";
    link.href = data.url;
    if (item.lang) {
      link.hreflang = item.lang;
    }
    link.textContent = title;
    heading.appendChild(link);
    item.appendChild(heading);
    var parts = withoutTitle(pieces(data.excerpt), title, data.content);
    if (parts.length) {
      var excerpt = document.createElement("p");
      excerpt.className = "search-result__excerpt";
      parts.forEach(function (part) {
        var node = document.createTextNode(part.text);
        if (part.mark) {
          var mark = document.createElement("mark");
          mark.appendChild(node);
          node = mark;
        }
        excerpt.appendChild(node);
      });
      item.appendChild(excerpt);
    }
    return item;
  };

  var searched = 0;
  var found = [];
  var shown = 0;
  var term = "";

  var say = function () {
    var count = found.length;
    var values = { n: count.toLocaleString(lang), q: term };
    if (!count) {
      status.textContent = message("none", values);
    } else {
      var rule = plural && plural.select(count) === "one" ? "one" : "other";
      status.textContent = message(rule, values);
    }
  };

  // The next batch of results, drawn in one step once all of its data is in.
  var next = function (id, fresh) {
    var batch = found.slice(shown, shown + BATCH);
    return Promise.all(batch.map(function (hit) { return hit.result.data(); }))
      .then(function (data) {
        if (id !== searched) {
          return;
        }
        var items = document.createDocumentFragment();
        data.forEach(function (entry, i) { items.appendChild(result(entry, batch[i].lang)); });
        if (fresh) {
          list.replaceChildren(items);
          say();
        } else {
          list.appendChild(items);
        }
        shown += batch.length;
        more.hidden = shown >= found.length;
      });
  };

  var run = function (query) {
    var id = (searched += 1);
    term = query.trim();
    if (!term) {
      list.removeAttribute("aria-busy");
      found = [];
      shown = 0;
      list.replaceChildren();
      status.textContent = "";
      more.hidden = true;
      return;
    }
    var hits = function (one) {
      return one.pagefind.search(term).then(function (search) {
        return ((search && search.results) || []).map(function (hit) {
          return { result: hit, lang: one.lang };
        });
      });
    };
    // The page's own language is drawn as soon as it is found; the other languages'
    // results are added after it (below: nothing drawn moves); the list is aria-busy
    // until every language has answered.
    list.setAttribute("aria-busy", "true");
    var done = function () {
      if (id === searched) {
        list.removeAttribute("aria-busy");
      }
    };
    load()
      .then(function (engines) {
        var rest = function () {
          return Promise.all(engines.others().map(function (one) { return one.then(hits); }));
        };
        return engines.own.then(hits).then(function (own) {
          if (id !== searched) {
            return null;
          }
          found = own;
          shown = 0;
          var drawn = own.length ? next(id, true) : Promise.resolve();
          return drawn.then(rest);
        });
      })
      .then(function (each) {
        if (id !== searched || !each) {
          return null;
        }
        var fresh = !found.length;
        found = found.concat([].concat.apply([], each));
        if (fresh || shown < BATCH) {
          return next(id, fresh).then(say);
        }
        more.hidden = shown >= found.length;
        say();
        return null;
      })
      .catch(function (error) {
        status.textContent = "";
        window.console.error(error);
      })
      .then(done);
  };

  var timer = 0;
  input.addEventListener("input", function () {
    window.clearTimeout(timer);
    timer = window.setTimeout(function () { run(input.value); }, 250);
  });
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    window.clearTimeout(timer);
    run(input.value);
  });
  more.addEventListener("click", function () {
    var first = shown;
    next(searched, false).then(function () {
      var link = list.children[first] && list.children[first].querySelector("a");
      if (link) {
        link.focus();
      }
    });
  });

  input.disabled = false;
  var query = new URLSearchParams(window.location.search).get("q");
  if (query) {
    input.value = query;
    run(query);
  } else {
    input.focus();
    load().then(function (engines) {
      return engines.own.then(engines.others);
    }).catch(function () { return null; });
  }
})();
