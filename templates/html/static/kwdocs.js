/* kwdocs site script: folder tree, search, live reload under `kwdocs serve`.
 *
 * Everything the page shows from data goes through textContent and
 * setAttribute, never innerHTML, so no name or path can become markup.
 * The data comes from scripts beside this one (tree.js, keywords/*.js, fulltext/*.js)
 * because browsers refuse fetch() from file://.
 */
(function () {
  "use strict";

  var MAX_RESULTS = 50;

  function meta(name) {
    var element = document.querySelector('meta[name="' + name + '"]');
    return element ? element.getAttribute("content") || "" : "";
  }

  var page = meta("kwdocs-page");
  var root = "../".repeat(page.split("/").length - 1) || "./";   // the way up from this page to the site's root

  /* A global set by one of our data scripts: an own property of window,
   * never an element that content named with the same id. */
  function dataGlobal(name) {
    if (!Object.prototype.hasOwnProperty.call(window, name)) return null;
    var value = window[name];
    return value && typeof value === "object" && !(value instanceof Node) ? value : null;
  }

  function quotePath(path) {
    return path.split("/").map(encodeURIComponent).join("/");
  }

  function siteHref(path, anchor) {
    return root + quotePath(path) + (anchor ? "#" + encodeURIComponent(anchor) : "");
  }

  // Where a file's or folder's pages are: its own path, unless the tree data says otherwise
  // (a page name cut to fit the file system's limit, a folder name escaped).
  function placeOf(table, path) {
    var data = dataGlobal("KWDOCS_TREE");
    var places = data && data[table];
    return places && Object.prototype.hasOwnProperty.call(places, path) ? String(places[path]) : path;
  }

  function docsHref(file, anchor) { return siteHref(placeOf("pages", file) + "_docs.html", anchor); }
  function folderHref(folder) {
    return siteHref(folder ? placeOf("folderPages", folder) + "/index.html" : "index.html");
  }

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function basename(path) { return path.slice(path.lastIndexOf("/") + 1); }
  function dirname(path) { var at = path.lastIndexOf("/"); return at < 0 ? "" : path.slice(0, at); }

  /* The source file or folder this page is about, to open the tree there. */
  function currentSubject() {
    var match = /^(.*)_(docs|kw)\.html$/.exec(page);
    if (match) return { file: match[1], folder: dirname(match[1]) };
    return { file: null, folder: dirname(page) };
  }

  // ------------------------------------------------------------ folder tree

  function buildTree(data) {
    var nodes = { "": { path: "", folders: [], files: [] } };
    function folderNode(path) {
      if (nodes[path]) return nodes[path];
      var node = { path: path, folders: [], files: [] };
      nodes[path] = node;
      folderNode(dirname(path)).folders.push(node);
      return node;
    }
    (data.folders || []).forEach(folderNode);
    (data.files || []).forEach(function (file) { folderNode(dirname(file)).files.push(file); });
    Object.keys(nodes).forEach(function (key) {
      nodes[key].folders.sort(function (a, b) { return a.path < b.path ? -1 : 1; });
      nodes[key].files.sort();
    });
    return nodes[""];
  }

  function renderFolder(node, list, subject) {
    node.folders.forEach(function (child) {
      var item = element("li", "folder");
      var details = element("details");
      var summary = element("summary");
      var link = element("a", null, basename(child.path) + "/");
      link.setAttribute("href", folderHref(child.path));
      var place = placeOf("folderPages", child.path);   // the subject is where the page is
      if (!subject.file && place === subject.folder) link.setAttribute("aria-current", "page");
      summary.appendChild(link);
      details.appendChild(summary);
      var children = element("ul");
      details.appendChild(children);
      var filled = false;
      function fill() {
        if (!filled) { filled = true; renderFolder(child, children, subject); }
      }
      details.addEventListener("toggle", function () { if (details.open) fill(); });
      if (subject.folder === place || subject.folder.indexOf(place + "/") === 0) {
        fill();
        details.open = true;
      }
      item.appendChild(details);
      list.appendChild(item);
    });
    node.files.forEach(function (file) {
      var item = element("li", "file");
      var link = element("a", null, basename(file));
      link.setAttribute("href", docsHref(file));
      if (placeOf("pages", file) === subject.file) link.setAttribute("aria-current", "page");
      item.appendChild(link);
      list.appendChild(item);
    });
  }

  function showTree() {
    var nav = document.getElementById("kwdocs-tree");
    var data = dataGlobal("KWDOCS_TREE");
    if (!nav || !data) return;
    var heading = element("a", "tree-root", (data.project || "") + "/");
    heading.setAttribute("href", folderHref(""));
    nav.appendChild(heading);
    var list = element("ul");
    renderFolder(buildTree(data), list, currentSubject());
    nav.appendChild(list);
    var current = nav.querySelector('[aria-current="page"]');
    if (current && current.scrollIntoView) current.scrollIntoView({ block: "center" });
  }

  // ------------------------------------------------------------ search

  // The keyword index: a script per shard (keywords/<shard>.js), each holding the parts of some
  // units of the build, listed by keywords/buckets.js; all are loaded on the first search, since a
  // keyword is found by any part of its name.
  var keywordIndex = null;    // prepared rows, once every shard has loaded
  var indexState = "absent";  // absent | loading | ready | failed
  var pendingQuery = null;

  function loadScript(path, done) {
    var script = document.createElement("script");
    script.src = root + "_kwdocs/" + path;
    script.onload = function () { done(true); };
    script.onerror = function () { done(false); };
    document.head.appendChild(script);
  }

  /* Rows of every part loaded, for keywords of files that have a page (all, normally). */
  function prepareKeywords() {
    var tree = dataGlobal("KWDOCS_TREE");
    var documented = tree ? new Set(tree.files || []) : null;
    var shards = dataGlobal("KWDOCS_KEYWORDS") || {};
    var rows = [];
    Object.keys(shards).sort().forEach(function (shard) {
      (Array.isArray(shards[shard]) ? shards[shard] : []).forEach(function (part) {
        (part.keywords || []).forEach(function (row) {
          var file = String(part.files[row[2]] || "");
          if (documented && !documented.has(file)) return;
          rows.push({
            name: String(row[0]), lower: String(row[0]).toLowerCase(),
            kind: part.kinds[row[1]] || "", file: file,
            line: row[3], anchor: row[4], shown: row[5] || "", lowerShown: String(row[5] || "").toLowerCase()
          });
        });
      });
    });
    return rows;
  }

  function loadIndex() {
    if (indexState !== "absent") return;
    indexState = "loading";
    function finished(ok) {
      keywordIndex = prepareKeywords();
      indexState = ok ? "ready" : "failed";
      if (pendingQuery !== null) runSearch(pendingQuery);
    }
    loadScript("keywords/buckets.js", function (listed) {
      var shards = listed ? dataGlobal("KWDOCS_KEYWORD_SHARDS") : null;
      if (!Array.isArray(shards)) { finished(false); return; }
      var waiting = shards.length, failed = false;
      if (!waiting) finished(true);
      shards.forEach(function (shard) {
        loadScript("keywords/" + encodeURIComponent(String(shard)) + ".js", function (ok) {
          failed = failed || !ok;
          if (--waiting === 0) finished(!failed);
        });
      });
    });
  }

  /* 0 exact, 1 prefix, 2 substring, -1 no match (case-insensitive). */
  function rank(text, query) {
    if (text === query) return 0;
    var at = text.indexOf(query);
    return at < 0 ? -1 : (at === 0 ? 1 : 2);
  }

  function findKeywords(query) {
    var found = [];
    if (!keywordIndex) return found;
    for (var i = 0; i < keywordIndex.length; i++) {
      var entry = keywordIndex[i];
      var score = rank(entry.lower, query);
      if (score < 0 && entry.lowerShown && entry.lowerShown.indexOf(query) >= 0) score = 3;  // Class.method
      if (score >= 0) found.push({ score: score, entry: entry });
    }
    found.sort(function (a, b) {
      return a.score - b.score || a.entry.name.length - b.entry.name.length ||
        (a.entry.lower < b.entry.lower ? -1 : a.entry.lower > b.entry.lower ? 1 : 0) ||
        (a.entry.file < b.entry.file ? -1 : a.entry.file > b.entry.file ? 1 : a.entry.line - b.entry.line);
    });
    return found;
  }

  function findFiles(query) {
    var data = dataGlobal("KWDOCS_TREE");
    var found = [];
    if (!data) return found;
    (data.files || []).forEach(function (file) {
      var lower = file.toLowerCase();
      var score = rank(basename(lower), query);
      if (score < 0 && lower.indexOf(query) >= 0) score = 3;
      if (score >= 0) found.push({ score: score, file: file });
    });
    found.sort(function (a, b) { return a.score - b.score || a.file.length - b.file.length; });
    return found;
  }

  // Full-text search: the documentation's words, one script per first two letters of a word
  // (fulltext/<xx>.js), loaded when a query needs it.  A text is found when it holds every
  // word of the query (or a longer word starting with it); whole words count more.
  var TEXT_RESULTS = 20;
  var MIN_WORD = 3;
  var bucketState = {};       // bucket -> loading | ready | failed; "" for the list of buckets

  function queryWords(query) {
    return (query.match(/[a-z0-9]+/g) || []).filter(function (word) {
      return word.length >= MIN_WORD && !/^[0-9]+$/.test(word);
    });
  }

  function loadBucket(bucket) {
    if (bucketState[bucket]) return;
    bucketState[bucket] = "loading";
    var script = document.createElement("script");
    script.src = root + "_kwdocs/fulltext/" + (bucket ? encodeURIComponent(bucket) : "buckets") + ".js";
    function done(state) {
      bucketState[bucket] = state;
      if (pendingQuery !== null) runSearch(pendingQuery);
    }
    script.onload = function () { done("ready"); };
    script.onerror = function () { done("failed"); };   // no word of the tree starts so
    document.head.appendChild(script);
  }

  function textsWith(data, word) {
    var found = {};
    var parts = data && Object.prototype.hasOwnProperty.call(data, word.slice(0, 2)) ? data[word.slice(0, 2)] : [];
    (Array.isArray(parts) ? parts : []).forEach(function (part) {
      Object.keys(part.words || {}).forEach(function (each) {
        if (each.lastIndexOf(word, 0) !== 0) return;
        var score = each === word ? 2 : 1;
        part.words[each].forEach(function (index) {
          var doc = part.docs[index];
          var file = String(part.files[doc[0]]);
          var key = file + "\n" + doc[1];
          if (!found[key] || found[key].score < score) {
            found[key] = { file: file, line: Number(doc[1]) || 0, label: String(doc[2]), score: score };
          }
        });
      });
    });
    return found;
  }

  /* {hits, loading}: the texts holding every word of the query, best first. */
  function findText(query) {
    var words = queryWords(query);
    if (!words.length) return { hits: [], loading: false };
    loadBucket("");     // which buckets there are: a word of no bucket finds nothing, and asks for no script
    if (bucketState[""] === "loading") return { hits: [], loading: true };
    var there = dataGlobal("KWDOCS_FULLTEXT_BUCKETS") || [];
    var loading = false;
    words.forEach(function (word) {
      if (there.indexOf(word.slice(0, 2)) < 0) return;
      loadBucket(word.slice(0, 2));
      if (bucketState[word.slice(0, 2)] === "loading") loading = true;
    });
    if (loading) return { hits: [], loading: true };
    var data = dataGlobal("KWDOCS_FULLTEXT");
    var scores = null;
    words.forEach(function (word) {
      var found = textsWith(data, word);
      if (scores === null) { scores = found; return; }
      var both = {};
      Object.keys(found).forEach(function (key) {
        if (scores[key]) {
          both[key] = { file: found[key].file, line: found[key].line, label: found[key].label,
                        score: scores[key].score + found[key].score };
        }
      });
      scores = both;
    });
    var hits = Object.keys(scores || {}).map(function (key) { return scores[key]; });
    hits.sort(function (a, b) {
      return b.score - a.score || (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line);
    });
    return { hits: hits, loading: false };
  }

  function resultItem(href, name, kind, where) {
    var link = element("a", "result");
    link.setAttribute("href", href);
    link.setAttribute("role", "option");
    link.setAttribute("title", name + " (" + kind + ") " + where);
    link.appendChild(element("span", "result-name", name));
    link.appendChild(element("span", "result-kind", kind));
    link.appendChild(element("span", "result-where", where));
    return link;
  }

  function runSearch(raw) {
    var box = document.getElementById("kwdocs-results");
    if (!box) return;
    var query = raw.trim().toLowerCase();
    pendingQuery = raw;
    box.textContent = "";
    if (!query) { box.hidden = true; return; }
    loadIndex();
    var keywords = findKeywords(query);
    var files = findFiles(query);
    var shown = 0;
    keywords.slice(0, MAX_RESULTS).forEach(function (hit) {
      var entry = hit.entry;
      box.appendChild(resultItem(docsHref(entry.file, entry.anchor), entry.shown || entry.name, entry.kind,
        entry.file + ":" + entry.line));
      shown++;
    });
    files.slice(0, Math.max(10, MAX_RESULTS - shown)).forEach(function (hit) {
      box.appendChild(resultItem(docsHref(hit.file), basename(hit.file), "file", hit.file));
      shown++;
    });
    var texts = findText(query);
    if (texts.hits.length) box.appendChild(element("p", "result-status", "In the documentation text:"));
    texts.hits.slice(0, TEXT_RESULTS).forEach(function (hit) {
      box.appendChild(resultItem(docsHref(hit.file, hit.line ? "L" + hit.line : ""), hit.label, "text",
        hit.file + (hit.line ? ":" + hit.line : "")));
      shown++;
    });
    var total = keywords.length + files.length + texts.hits.length;
    var status = indexState === "loading" || texts.loading ? "Loading the search index…" :
      indexState === "failed" ? "The keyword index could not be loaded: showing files only." :
      total === 0 ? "Nothing found." :
      total > shown ? "Showing " + shown + " of " + total + " results." : "";
    if (status) box.appendChild(element("p", "result-status", status));
    var first = box.querySelector("a.result");
    if (first) first.classList.add("active");
    box.hidden = false;
  }

  function moveActive(step) {
    var results = Array.prototype.slice.call(document.querySelectorAll("#kwdocs-results a.result"));
    if (!results.length) return;
    var at = results.findIndex(function (link) { return link.classList.contains("active"); });
    if (at >= 0) results[at].classList.remove("active");
    at = (at + step + results.length) % results.length;
    results[at].classList.add("active");
    results[at].scrollIntoView({ block: "nearest" });
  }

  function setUpSearch() {
    var input = document.getElementById("kwdocs-search");
    var box = document.getElementById("kwdocs-results");
    if (!input || !box) return;
    input.addEventListener("focus", loadIndex);
    input.addEventListener("input", function () { runSearch(input.value); });
    input.addEventListener("keydown", function (event) {
      if (event.key === "ArrowDown") { moveActive(1); event.preventDefault(); }
      else if (event.key === "ArrowUp") { moveActive(-1); event.preventDefault(); }
      else if (event.key === "Escape") { box.hidden = true; }
      else if (event.key === "Enter") {
        var active = box.querySelector("a.result.active");
        if (active) { box.hidden = true; window.location.href = active.href; event.preventDefault(); }
      }
    });
    document.addEventListener("click", function (event) {
      if (!box.contains(event.target) && event.target !== input) box.hidden = true;
    });
    // Following a result into this very page only changes the hash: close the results then too.
    box.addEventListener("click", function (event) {
      if (event.target.closest && event.target.closest("a.result")) { box.hidden = true; input.blur(); }
    });
    window.addEventListener("hashchange", function () { box.hidden = true; });
    document.addEventListener("keydown", function (event) {
      if (event.key === "/" && document.activeElement !== input) { input.focus(); event.preventDefault(); }
    });
  }

  // ------------------------------------------------------------ live reload (kwdocs serve)

  var SCROLL_KEY = "kwdocs-scroll:" + location.pathname;

  function restoreScroll() {
    try {
      var saved = sessionStorage.getItem(SCROLL_KEY);
      if (saved !== null) {
        sessionStorage.removeItem(SCROLL_KEY);
        window.scrollTo(0, parseInt(saved, 10) || 0);
      }
    } catch (error) { /* storage refused: nothing to restore */ }
  }

  /* Poll the server's build counter; reload when a rebuild changed the site.
   * A server without the endpoint (any other static server) stops the polling. */
  function liveReload() {
    if (location.protocol !== "http:" && location.protocol !== "https:") return;
    var known = null;
    function poll() {
      fetch("/__kwdocs_version", { cache: "no-store" }).then(function (response) {
        if (!response.ok) return null;
        return response.text();
      }).then(function (text) {
        if (text === null) return;
        var version = text.trim();
        if (known === null) {
          known = version;
          document.documentElement.setAttribute("data-kwdocs-live", version);
        } else if (version !== known) {
          try { sessionStorage.setItem(SCROLL_KEY, String(window.scrollY)); } catch (error) { /* ignore */ }
          location.reload();
          return;
        }
        setTimeout(poll, 250);
      }, function () {
        setTimeout(poll, 2000);  // the server is gone or restarting: try again, slowly
      });
    }
    poll();
  }

  // ------------------------------------------------------------ what every page has: written here, not into each page

  function button(id, className, label, text) {
    var node = element("button", className, text);
    node.id = id;
    node.setAttribute("type", "button");
    node.setAttribute("aria-label", label);
    return node;
  }

  /* The header's controls: the drawer button, the search box and its results, the keyword index
   * link, the theme toggle. */
  function buildHeader() {
    var header = document.querySelector(".kwdocs-header");
    if (!header || document.getElementById("kwdocs-search")) return;
    var drawer = button("kwdocs-drawer", "kwdocs-button kwdocs-drawer-button", "Folders and files", "\u2630");
    drawer.setAttribute("aria-controls", "kwdocs-tree");
    drawer.setAttribute("aria-expanded", "false");
    header.insertBefore(drawer, header.firstChild);
    var search = element("div", "kwdocs-search");
    var input = element("input");
    input.id = "kwdocs-search";
    [["type", "search"], ["placeholder", "Search keywords and files\u2026"], ["autocomplete", "off"],
     ["spellcheck", "false"], ["aria-label", "Search keywords and files"], ["aria-controls", "kwdocs-results"]]
      .forEach(function (pair) { input.setAttribute(pair[0], pair[1]); });
    var results = element("div", "kwdocs-results");
    results.id = "kwdocs-results";
    results.setAttribute("role", "listbox");
    results.hidden = true;
    search.appendChild(input);
    search.appendChild(results);
    header.appendChild(search);
    var keywords = element("a", "kwdocs-keywords-link", "Keyword index");
    keywords.setAttribute("href", root + "keywords.html");
    header.appendChild(keywords);
    header.appendChild(button("kwdocs-theme", "kwdocs-button", "Dark or light", "\u25d0"));
  }

  /* A permalink after each heading with an id. */
  function addPermalinks() {
    var headings = document.querySelectorAll(".kwdocs-content h1[id], .kwdocs-content h2[id], " +
                                             ".kwdocs-content h3[id], .kwdocs-content h4[id]");
    Array.prototype.forEach.call(headings, function (heading) {
      var link = element("a", "headerlink", "\u00b6");
      link.setAttribute("href", "#" + heading.id);
      heading.appendChild(link);
    });
  }

  /* On a keyword page, beside each keyword's entry ("class, line 9", to its definition's entry on
   * the docs page), a link straight to that line of the source. */
  function addSourceLinks() {
    if (!document.body.classList.contains("kind-kw")) return;
    Array.prototype.forEach.call(document.querySelectorAll('.kwdocs-content li > a[href*="_docs.html#"]'), function (entry) {
      var line = /, line (\d+)$/.exec(entry.textContent);
      if (!line) return;
      var link = element("a", null, "source");
      link.setAttribute("href", entry.getAttribute("href").split("#")[0] + "#L" + line[1]);
      entry.parentNode.insertBefore(link, entry.nextSibling);
      entry.parentNode.insertBefore(document.createTextNode(" "), link);
    });
  }

  function lineAnchor(number) {
    var anchor = document.createElement("a");
    anchor.id = "L" + number;
    return anchor;
  }

  /* Each line of a numbered source (its count in data-lines) gets an empty anchor, L1, L2 ...,
   * at its start, inside a token that runs over lines: the stylesheet draws its number, a click
   * on the number links to the line, and #L208 leads there. */
  function numberLines() {
    Array.prototype.forEach.call(document.querySelectorAll("pre.kwdocs-numbered[data-lines] > code"), function (code) {
      var count = parseInt(code.parentNode.getAttribute("data-lines"), 10) || 0;
      if (count < 1) return;
      var walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
      var texts = [];
      while (walker.nextNode()) texts.push(walker.currentNode);
      var line = 1;
      code.insertBefore(lineAnchor(1), code.firstChild);
      for (var index = 0; index < texts.length && line < count; index++) {
        var node = texts[index];
        if (node.data.indexOf("\n") < 0) continue;
        var pieces = node.data.split("\n");
        var fragment = document.createDocumentFragment();
        var text = pieces[0];
        for (var piece = 1; piece < pieces.length; piece++) {
          if (line < count) {
            fragment.appendChild(document.createTextNode(text + "\n"));
            fragment.appendChild(lineAnchor(++line));
            text = pieces[piece];
          } else {
            text += "\n" + pieces[piece];
          }
        }
        if (text) fragment.appendChild(document.createTextNode(text));
        node.parentNode.replaceChild(fragment, node);
      }
    });
  }

  // a line anchor (#L208) inside a folded source: unfold it, then show the line
  function revealTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id ? document.getElementById(id) : null;
    if (!target) return;
    var folded = target.closest("details:not([open])");
    if (folded) {
      folded.open = true;
      target.scrollIntoView();
    }
  }

  // dark or light: the reader's choice, remembered; else the system's (prefers-color-scheme, in the CSS)
  var THEME_KEY = "kwdocs-theme";
  function applyTheme(theme) {
    if (theme === "dark" || theme === "light") document.documentElement.setAttribute("data-theme", theme);
    else document.documentElement.removeAttribute("data-theme");
  }
  function setUpTheme() {
    var stored = null;
    try { stored = localStorage.getItem(THEME_KEY); } catch (error) { /* file:// in some browsers */ }
    applyTheme(stored);
    var button = document.getElementById("kwdocs-theme");
    if (!button) return;
    button.addEventListener("click", function () {
      var dark = document.documentElement.getAttribute("data-theme") === "dark" ||
        (!document.documentElement.getAttribute("data-theme") &&
         window.matchMedia("(prefers-color-scheme: dark)").matches);
      var next = dark ? "light" : "dark";
      applyTheme(next);
      try { localStorage.setItem(THEME_KEY, next); } catch (error) { /* not remembered, still applied */ }
    });
  }

  // a folder page's diagrams (pre.mermaid), drawn by the site's copy of Mermaid, which only such a page loads
  function drawDiagrams() {
    if (!window.mermaid || !document.querySelector("pre.mermaid")) return;
    var theme = document.documentElement.getAttribute("data-theme");
    var dark = theme === "dark" || (!theme && window.matchMedia("(prefers-color-scheme: dark)").matches);
    window.mermaid.initialize({startOnLoad: false, securityLevel: "strict", theme: dark ? "dark" : "default"});
    window.mermaid.run({querySelector: "pre.mermaid"});
  }

  // under 60rem the folder tree is a drawer, opened by the header's button
  function setUpDrawer() {
    var button = document.getElementById("kwdocs-drawer");
    if (!button) return;
    button.addEventListener("click", function () {
      var open = document.body.classList.toggle("kwdocs-drawer-open");
      button.setAttribute("aria-expanded", open ? "true" : "false");
    });
  }

  // a source line's number (drawn by the stylesheet on its anchor) links to the line
  function setUpLineNumbers() {
    document.addEventListener("click", function (event) {
      var anchor = event.target;
      if (!anchor || anchor.nodeName !== "A" || anchor.hasAttribute("href") || !/^L\d+$/.test(anchor.id) ||
          !anchor.closest(".kwdocs-numbered")) return;
      location.hash = anchor.id;
    });
  }

  function start() {
    buildHeader();
    numberLines();
    addPermalinks();
    addSourceLinks();
    setUpTheme();
    drawDiagrams();
    setUpLineNumbers();
    setUpDrawer();
    revealTarget();
    window.addEventListener("hashchange", revealTarget);
    showTree();
    setUpSearch();
    restoreScroll();
    liveReload();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
