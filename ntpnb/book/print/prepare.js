// The single-page edition of the book, made ready to print as a book (ntpnb.book.pdf).
//
// Called with the prefixes of the documents the printed book leaves out (e.g. "book/api"), once
// the page's math is typeset. It
//   * removes those documents;
//   * marks each document's section (ntpnb-print-page: a new printed page), and moves Sphinx's
//     marker of the document (span#document-NAME, which links in the book point at) into it, so
//     that a link to the document lands on its first page, not at the foot of the page before;
//   * gives the ids that several documents repeat (Sphinx keeps ids unique within a document
//     only) a unique copy on each, and points each link within the book at its target in the
//     single page (a link into a document left out, or to nothing, is left as text);
//   * lets a long token in a table (a file path) break after its "/" and "_";
//   * replaces the theme's printed contents with the book's: the parts, every page's title and
//     the numbered sections of the chapters, each with an empty slot for its page number
//     (span.ntpnb-print-page-number, of a fixed width: filling it changes no line);
//   * puts an empty marker block before each figure (ntpnb-print-before-ID), where the text
//     before it ends;
//   * gives the title of each block printed open (a dropdown's summary) an id (ntpnb-print-block-N);
//   * links every heading of the outline, every figure and its marker, and every block's title
//     from a hidden list, so that Chromium writes a named destination (its page and position) for
//     each.
// It returns the outline: [{part: "caption"} | {id, title, depth}] in reading order (depth 0: a
// page's title; 1: its sections; 2: their subsections), the ids the contents show pages for, and
// the ids of the figures.
(leftOut) => {
  const MARKER = "document-";
  const OUTLINE_DEPTH = 2;
  const LONG_TOKEN = 24; // characters
  const FIGURE_MARK = "ntpnb-print-before-";
  const BLOCK_TITLE = "ntpnb-print-block-";

  const markers = () => [...document.querySelectorAll(`span[id^="${MARKER}"]`)];
  const docName = (marker) => marker.id.slice(MARKER.length);
  const isLeftOut = (name) => leftOut.some((prefix) => name.startsWith(prefix));

  // The text of a heading: its words and its math (as MathJax's assistive MathML reads it), without
  // the link sign.
  const plainText = (element) => {
    let text = "";
    const walk = (node) => {
      if (node.nodeType === Node.TEXT_NODE) {
        text += node.textContent;
      } else if (node.nodeType === Node.ELEMENT_NODE) {
        if (node.classList.contains("headerlink")) return;
        if (node.tagName === "MJX-CONTAINER") {
          const mml = node.querySelector("mjx-assistive-mml");
          text += mml ? mml.textContent : node.textContent;
          return;
        }
        node.childNodes.forEach(walk);
      }
    };
    walk(element);
    return text.replace(/\s+/g, " ").trim();
  };

  // 1. The documents left out of the printed book.
  for (const marker of markers()) {
    if (!isLeftOut(docName(marker))) continue;
    const section = marker.nextElementSibling;
    if (section && section.tagName === "SECTION") section.remove();
    marker.remove();
  }

  // 2. Each document's section: the root document's (the first in the article), then each marked one.
  const article = document.querySelector("article.bd-article");
  const rootSection = article.querySelector("section");
  const pages = [{ name: null, section: rootSection }];
  for (const marker of markers()) {
    const section = marker.nextElementSibling;
    if (!section || section.tagName !== "SECTION") continue;
    section.prepend(marker);
    pages.push({ name: docName(marker), section });
  }
  for (const { section } of pages) section.classList.add("ntpnb-print-page");
  const pageNamed = new Map(pages.map(({ name, section }) => [name, section]));

  // 3. Ids that several pages repeat (each chapter's "what-this-shows"): the first keeps its id, each
  // later page's copy gets its own.
  const withId = [...article.querySelectorAll("[id]")];
  const count = new Map();
  for (const element of withId) count.set(element.id, (count.get(element.id) ?? 0) + 1);
  const ownIds = new Map(); // page section -> Map(id -> its copy's id on that page)
  const copies = new Map();
  for (const element of withId) {
    const id = element.id;
    if (count.get(id) < 2) continue;
    const copy = copies.get(id) ?? 0;
    copies.set(id, copy + 1);
    const page = element.closest(".ntpnb-print-page");
    if (!ownIds.has(page)) ownIds.set(page, new Map());
    if (ownIds.get(page).has(id)) continue; // a page repeating its own id: links go to the first
    if (copy > 0) element.id = `${id}-ntpnb-${copy}`;
    ownIds.get(page).set(id, element.id);
  }

  // 4. Links within the book point into the single page: "#id" (on the link's own page where it has
  // a copy), "#document-NAME#id" (on page NAME), and Sphinx's "ROOT.html#id" (as "#id"; a bare
  // "ROOT.html" is the first page). A link into a page left out, or to nothing, is a link no more
  // (its text stays).
  const resolve = (href, from) => {
    const hash = href.indexOf("#");
    let fragment = hash < 0 ? "" : decodeURIComponent(href.slice(hash + 1));
    let page = from;
    if (fragment.startsWith(MARKER)) {
      const inner = fragment.indexOf("#");
      page = pageNamed.get(fragment.slice(MARKER.length, inner < 0 ? undefined : inner));
      if (!page || inner < 0) return page ? fragment : null;
      fragment = fragment.slice(inner + 1);
    }
    if (!fragment) return hash < 0 ? rootSection.id : null;
    const own = ownIds.get(page)?.get(fragment);
    if (own) return own;
    return document.getElementById(fragment) ? fragment : null;
  };
  for (const link of article.querySelectorAll("a[href]")) {
    const href = link.getAttribute("href");
    if (/^[a-z][a-z0-9+.-]*:/i.test(href) || !(href.startsWith("#") || /\.html(#|$)/.test(href))) continue;
    const target = resolve(href, link.closest(".ntpnb-print-page"));
    if (target) link.setAttribute("href", `#${target}`);
    else link.removeAttribute("href");
  }

  // 5. A long token in a table (a file path, an identifier) may break after a "/" or "_", where it
  // would otherwise widen its column past the page: a table's words are never broken.
  const longToken = new RegExp(`(\\S{${LONG_TOKEN},})`);
  for (const cell of article.querySelectorAll("td, th")) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    const texts = [];
    while (walker.nextNode()) texts.push(walker.currentNode);
    for (const text of texts) {
      if (!longToken.test(text.textContent) || text.parentElement.closest("mjx-container")) continue;
      // (an element around it that keeps its words whole no longer keeps this one)
      for (let e = text.parentElement; e !== cell; e = e.parentElement) e.classList.add("ntpnb-print-breakable");
      const pieces = document.createDocumentFragment();
      text.textContent.split(longToken).forEach((part, i) => {
        if (i % 2 === 0) return pieces.append(part); // between the long tokens
        part.split(/(?<=[/_])/).forEach((piece, j) => pieces.append(...(j ? [document.createElement("wbr")] : []), piece));
      });
      text.replaceWith(pieces);
    }
  }

  // 6. The parts, from the theme's printed contents: each caption, then the documents it lists.
  const partOf = new Map();
  const toc = document.querySelector("#jb-print-toc");
  let caption = null;
  for (const element of toc ? toc.querySelectorAll("p.caption, li.toctree-l1 > a") : []) {
    if (element.matches("p.caption")) caption = plainText(element);
    else partOf.set(decodeURIComponent(element.getAttribute("href").slice(1 + MARKER.length)), caption);
  }

  // 7. The outline: each page's title and its sections, under the part it belongs to. An entry
  // points at its heading (given an id: its section may begin at the foot of the page before). The
  // root page's heading repeats the book's title, which the title page shows (the theme does not
  // print it): its entry is the introduction, and points at its section, which starts a page.
  const headingOf = (section) =>
    section.querySelector(":scope > h1, :scope > h2, :scope > h3, :scope > h4, :scope > h5, :scope > h6");
  const found = []; // [{part} | {section, heading, depth}], in reading order
  let part = null;
  for (const { name, section } of pages) {
    const itsPart = partOf.get(name) ?? null;
    if (itsPart !== part && itsPart !== null) found.push({ part: itsPart });
    part = itsPart;
    const visit = (sec, depth) => {
      const heading = headingOf(sec);
      if (heading) found.push({ section: sec, heading, depth });
      if (depth < OUTLINE_DEPTH) sec.querySelectorAll(":scope > section").forEach((s) => visit(s, depth + 1));
    };
    visit(section, 0);
  }
  const outline = [];
  const headings = new Map(); // an entry's id -> its heading
  for (const item of found) {
    if (item.part !== undefined) {
      outline.push(item);
      continue;
    }
    const isRoot = item.section === rootSection;
    const target = isRoot ? item.section : item.heading;
    if (!target.id) target.id = `ntpnb-print-heading-${headings.size + 1}`;
    const title = isRoot ? "Introduction" : plainText(item.heading);
    outline.push({ id: target.id, title, depth: item.depth });
    headings.set(target.id, item.heading);
  }

  // 8. The contents: the parts, each page's title, and a chapter's numbered sections.
  const contents = document.createElement("ol");
  contents.className = "ntpnb-print-contents-list";
  const shown = [];
  for (const item of outline) {
    const li = document.createElement("li");
    if (item.part !== undefined) {
      li.className = "ntpnb-print-contents-part";
      li.textContent = item.part;
      contents.append(li);
      continue;
    }
    const heading = headings.get(item.id);
    if (item.depth > 1 || (item.depth === 1 && !heading.querySelector(".section-number"))) continue;
    li.className = `ntpnb-print-contents-depth-${item.depth}`;
    const link = document.createElement("a");
    link.href = `#${item.id}`;
    const title = document.createElement("span");
    title.className = "ntpnb-print-contents-title";
    if (item.depth === 0 && item.title !== plainText(heading)) {
      title.textContent = item.title;
    } else {
      const copy = heading.cloneNode(true);
      copy.querySelectorAll(".headerlink").forEach((e) => e.remove());
      title.append(...copy.childNodes);
    }
    const number = document.createElement("span");
    number.className = "ntpnb-print-page-number";
    number.dataset.target = item.id;
    link.append(title, number);
    li.append(link);
    contents.append(li);
    shown.push(item.id);
  }
  const front = document.querySelector("#jb-print-docs-body");
  const wrapper = document.createElement("div");
  wrapper.className = "ntpnb-print-contents";
  const head = document.createElement("h2");
  head.textContent = "Contents";
  wrapper.append(head, contents);
  if (toc) toc.replaceWith(wrapper);
  else (front || article).prepend(wrapper);

  // 9. Each figure's marker: an empty block right before the figure (before the cell that shows
  // it), whose printed position is where the text before the figure ends (ntpnb.book.pdf floats a
  // figure that leaves its page half blank, print/float.js).
  const figures = [];
  for (const figure of article.querySelectorAll("figure[id]")) {
    const marker = document.createElement("div");
    marker.className = "ntpnb-print-mark";
    marker.id = FIGURE_MARK + figure.id;
    (figure.closest("div.cell") ?? figure).before(marker);
    figures.push(figure.id);
  }

  // 10. Each title of a block printed open (a dropdown's, a block of checks'), by an id of its own.
  const titles = [];
  for (const summary of article.querySelectorAll("details:not(.hide) > summary")) {
    if (!summary.id) summary.id = `${BLOCK_TITLE}${titles.length + 1}`;
    titles.push(summary.id);
  }

  // 11. A named destination for every heading of the outline, every figure and its marker, and
  // every block's title.
  const anchors = document.createElement("nav");
  anchors.className = "ntpnb-print-anchors";
  anchors.setAttribute("aria-hidden", "true");
  const targets = outline.filter((item) => item.id !== undefined).map((item) => item.id);
  for (const id of [...targets, ...figures, ...figures.map((id) => FIGURE_MARK + id), ...titles]) {
    const link = document.createElement("a");
    link.href = `#${id}`;
    anchors.append(link);
  }
  document.body.append(anchors);
  return { outline, contents: shown, figures };
}
