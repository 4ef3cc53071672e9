// Figures that float, as a printed book's do (ntpnb.book.pdf): a figure too tall for what is left
// of its page goes to the next one and leaves the rest of its page blank, so the text that follows
// it is moved before it, to fill the blank.
//
// Called with [{id, blank}]: the id of a figure that a print put at the top of a page after a page
// left more than half blank, and that blank's height (CSS pixels). The figure's block (the cell
// that shows it, or the figure itself) is moved after the blocks that follow it in reading order
// (into the sections after its own, as a book's figure floats past a heading), one by one, until
// their height fills the blank, and never after a heading alone. The figures right after it move
// with it, in their order; a figure it meets on its way joins it (they float on together), so the
// figures keep their order; it never leaves its page of the book (a chapter). Its marker (the
// empty block before it, whose printed position says where the text before it ends) moves with
// it. Returns the ids of the figures moved.
(moves) => {
  const MARKER_PREFIX = "ntpnb-print-before-";
  const HEADING = "h1, h2, h3, h4, h5, h6, .rubric";

  // The blocks of a section in reading order, its subsections' blocks in place of the subsections.
  function* blocksOf(section) {
    for (const child of section.children) {
      if (child.matches("section")) yield* blocksOf(child);
      else yield child;
    }
  }
  // The blocks after `element` in reading order, up to the end of its page of the book.
  function* blocksAfter(element) {
    for (let node = element; node && !node.matches(".ntpnb-print-page"); node = node.parentElement) {
      for (let next = node.nextElementSibling; next; next = next.nextElementSibling) {
        if (next.matches("section")) yield* blocksOf(next);
        else yield next;
      }
    }
  }
  // A block the figure may not pass but takes along: another figure (or its marker).
  const isFigure = (block) => block.matches("figure, .ntpnb-print-mark") || block.querySelector("figure") !== null;
  // The figure a figure's block shows (its marker names it).
  const figureIn = (block) =>
    block.matches(".ntpnb-print-mark")
      ? document.getElementById(block.id.slice(MARKER_PREFIX.length))
      : block.matches("figure") ? block : block.querySelector("figure");

  // A figure's block with its marker, and the figures' blocks right after it: they float together.
  const unitOf = (figure) => figure.closest("div.cell") ?? figure;
  const group = (figure) => {
    const blocks = [];
    let block = unitOf(figure);
    while (block) {
      const marker = block.previousElementSibling?.matches(".ntpnb-print-mark") ? block.previousElementSibling : null;
      blocks.push(...(marker ? [marker] : []), block);
      let next = block.nextElementSibling;
      if (next?.matches(".ntpnb-print-mark")) next = next.nextElementSibling;
      const nextFigure = next?.matches("figure") ? next : next?.querySelector(":scope > .cell_output figure");
      block = nextFigure && unitOf(nextFigure) === next ? next : null;
    }
    return blocks;
  };

  const moved = [];
  for (const { id, blank } of moves) {
    const figure = document.getElementById(id);
    if (!figure) continue;
    const blocks = group(figure);
    let last = null;
    let filled = 0;
    const taken = new Set(blocks);
    for (const block of blocksAfter(blocks[blocks.length - 1])) {
      if (taken.has(block)) continue; // a block of a figure that joined
      if (last !== null && filled >= blank && !last.matches(HEADING)) break;
      if (isFigure(block)) {
        const other = figureIn(block);
        if (!other) break;
        const joined = group(other).filter((b) => !taken.has(b));
        joined.forEach((b) => taken.add(b));
        blocks.push(...joined);
        continue;
      }
      last = block;
      filled += block.getBoundingClientRect().height;
    }
    if (last === null || filled === 0 || last.matches(HEADING)) continue;
    last.after(...blocks);
    moved.push(id);
  }
  return moved;
}
