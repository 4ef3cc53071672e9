// The pages of the book to print next (ntpnb.book.pdf): while figures float, a print need only
// hold the pages of the book (chapters) in which a figure moved. Each page of the book starts a
// printed page, and a figure never floats out of its page of the book, so a page's layout depends
// on its own content alone: the pages in which nothing moved are settled, and are left out of
// the next print (class ntpnb-print-skip: display none).
//
// Called with the ids of the figures that moved: every block that neither is nor holds the page
// of the book of one of them is left out (a page of the book may hold others: the introduction
// holds the chapters on the single page). Called with no ids, it puts every block back. Returns
// how many pages of the book the next print holds (0: all).
(ids) => {
  const SKIP = "ntpnb-print-skip";
  for (const block of document.querySelectorAll(`.${SKIP}`)) block.classList.remove(SKIP);
  const kept = [...new Set(ids.map((id) => document.getElementById(id).closest(".ntpnb-print-page")))];
  const holdsKept = (block) => kept.some((page) => block.contains(page));
  function leaveOut(block) {
    for (const child of block.children) {
      if (kept.includes(child) || child.matches("script, style, link")) continue;
      if (holdsKept(child)) leaveOut(child);
      else child.classList.add(SKIP);
    }
  }
  if (kept.length) leaveOut(document.body);
  return kept.length;
}
