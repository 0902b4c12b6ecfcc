/*
 * sitegen preview: live reload and error overlay.
 *
 * Served only by `sitegen serve` and injected into HTML responses at serve time; it is never
 * written into a build. It listens to the server's event stream (/__sitegen/events):
 *   hello    {build, pending, problem, notice}  the current state (on every (re)connection)
 *   reload   {build, paths?}           a rebuild finished: reload the page; with `paths`, the
 *                                      rebuild in progress served those pages ahead: only
 *                                      pages at one of them reload now (the rest at its end)
 *   css      {build}                   only stylesheets changed: swap them without a reload
 *   problem  {kind, file, line, message} the last build failed: show the overlay
 *   notice   {message|null}            a non-fatal notice (e.g. a failed content refresh)
 * The stream URL carries this page's path, so a rebuild renders the open pages first.
 * Error text is untrusted: it is only ever shown with textContent, never parsed as HTML.
 */
(function () {
  "use strict";
  if (window.__sitegenPreview || typeof EventSource === "undefined") {
    return;
  }
  var script = document.currentScript;
  var state = {
    build: (script && script.getAttribute("data-sitegen-build")) || "",
    path: window.location.pathname,
    overlay: null,
    notice: null,
  };
  window.__sitegenPreview = state;

  function style(element, rules) {
    // CSSOM assignments (not style attributes), so a strict CSP in the page does not block them.
    Object.keys(rules).forEach(function (name) {
      element.style[name] = rules[name];
    });
    return element;
  }

  function element(tag, rules, text) {
    var node = style(document.createElement(tag), rules || {});
    if (text !== undefined && text !== null) {
      node.textContent = String(text);
    }
    return node;
  }

  function hideOverlay() {
    if (state.overlay) {
      state.overlay.remove();
      state.overlay = null;
    }
  }

  function showOverlay(problem) {
    hideOverlay();
    var host = document.createElement("div");
    host.id = "sitegen-overlay";
    host.setAttribute("data-kind", String(problem.kind || "build"));
    style(host, { position: "fixed", inset: "0", zIndex: "2147483647" });
    var root = host.attachShadow({ mode: "open" });
    var backdrop = element("div", {
      position: "absolute", inset: "0", background: "rgba(10, 10, 14, 0.72)",
      display: "flex", alignItems: "flex-start", justifyContent: "center",
      padding: "6vh 16px", boxSizing: "border-box", overflow: "auto",
    });
    var panel = element("div", {
      background: "#1b1c22", color: "#f1f1f3", maxWidth: "880px", width: "100%",
      borderTop: "6px solid #ff5f56", borderRadius: "6px", padding: "20px 24px",
      boxShadow: "0 12px 40px rgba(0, 0, 0, 0.5)", boxSizing: "border-box",
      font: "14px/1.5 ui-sans-serif, system-ui, sans-serif",
    });
    var titles = { template: "Template error", config: "Configuration error" };
    var title = element("div", { fontSize: "18px", fontWeight: "600", color: "#ff8a80" },
      titles[problem.kind] || "Build failed");
    title.setAttribute("part", "title");
    panel.appendChild(title);
    if (problem.file) {
      var where = problem.file + (problem.line ? ":" + problem.line : "");
      var location = element("div", {
        marginTop: "8px", font: "13px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace",
        color: "#9ecbff",
      }, where);
      location.className = "location";
      panel.appendChild(location);
    }
    var message = element("pre", {
      marginTop: "12px", whiteSpace: "pre-wrap", wordBreak: "break-word",
      font: "13px/1.5 ui-monospace, SFMono-Regular, Menlo, monospace", color: "#f1f1f3",
      background: "#111217", padding: "12px", borderRadius: "4px",
    }, problem.message || "");
    message.className = "message";
    panel.appendChild(message);
    panel.appendChild(element("div", { marginTop: "12px", color: "#a0a0aa", fontSize: "12px" },
      "The last good build is still being served. Fix the file and save: this page heals itself. " +
      "Click outside or press Esc to hide."));
    backdrop.appendChild(panel);
    backdrop.addEventListener("click", function (event) {
      if (event.target === backdrop) {
        hideOverlay();
      }
    });
    root.appendChild(backdrop);
    document.documentElement.appendChild(host);
    state.overlay = host;
  }

  function showNotice(text) {
    if (state.notice) {
      state.notice.remove();
      state.notice = null;
    }
    if (!text) {
      return;
    }
    var box = element("div", {
      position: "fixed", right: "16px", bottom: "16px", maxWidth: "420px",
      zIndex: "2147483646", background: "#2b2410", color: "#ffe9a8",
      border: "1px solid #7a6320", borderRadius: "6px", padding: "10px 14px",
      font: "13px/1.4 ui-sans-serif, system-ui, sans-serif", cursor: "pointer",
      boxShadow: "0 6px 20px rgba(0, 0, 0, 0.35)",
    }, text);
    box.id = "sitegen-notice";
    box.title = "Click to dismiss";
    box.addEventListener("click", function () { box.remove(); });
    document.documentElement.appendChild(box);
    state.notice = box;
  }

  function reload() {
    window.location.reload();
  }

  function swapStylesheets(build) {
    var url = window.location.href.split("#")[0];
    fetch(url, { cache: "no-store", credentials: "same-origin" })
      .then(function (response) { return response.text(); })
      .then(function (text) {
        // DOMParser documents are inert: nothing in them runs.
        var fresh = new DOMParser().parseFromString(text, "text/html");
        var selector = 'link[rel~="stylesheet"]';
        var next = Array.prototype.slice.call(fresh.querySelectorAll(selector));
        var current = Array.prototype.slice.call(document.querySelectorAll(selector));
        if (next.length !== current.length) {
          reload();
          return;
        }
        current.forEach(function (link, index) {
          var replacement = document.importNode(next[index], false);
          if (replacement.getAttribute("href") === link.getAttribute("href")) {
            var fresher = new URL(replacement.href, window.location.href);
            fresher.searchParams.set("sitegen-reload", String(Date.now()));
            replacement.setAttribute("href", fresher.href);
          }
          var done = function () { link.remove(); };
          replacement.addEventListener("load", done);
          replacement.addEventListener("error", done);
          link.after(replacement);
        });
        state.build = build;
        state.cssSwaps = (state.cssSwaps || 0) + 1;
      })
      .catch(reload);
  }

  function data(event) {
    try {
      return JSON.parse(event.data) || {};
    } catch (error) {
      return {};
    }
  }

  var source = new EventSource("/__sitegen/events?path=" + encodeURIComponent(state.path));
  source.addEventListener("hello", function (event) {
    var hello = data(event);
    if (hello.build && hello.build !== state.build && hello.pending !== state.build) {
      reload(); // rebuilt (or the server restarted) since this page was served
      return;
    }
    if (hello.problem) {
      showOverlay(hello.problem);
    } else {
      hideOverlay();
    }
    showNotice(hello.notice);
  });
  source.addEventListener("reload", function (event) {
    var reloaded = data(event);
    if (Array.isArray(reloaded.paths) && reloaded.paths.indexOf(state.path) < 0) {
      return; // served ahead for other pages: this one reloads when the rebuild ends
    }
    hideOverlay();
    if (reloaded.build !== state.build) {
      reload();
    }
  });
  source.addEventListener("css", function (event) {
    hideOverlay();
    swapStylesheets(data(event).build);
  });
  source.addEventListener("problem", function (event) {
    showOverlay(data(event));
  });
  source.addEventListener("notice", function (event) {
    showNotice(data(event).message);
  });
  window.addEventListener("keydown", function (event) {
    if (event.key === "Escape") {
      hideOverlay();
    }
  });
  window.addEventListener("pagehide", function () { source.close(); });
  window.addEventListener("pageshow", function (event) {
    if (event.persisted) {
      reload(); // restored from the back-forward cache with its stream closed
    }
  });
})();
