/**
 * Offset paging of a console list: Previous and Next buttons, the filter form's submit going back
 * to the first page, and each reload told which buttons show.
 */
import { h } from './dom.js';

export interface Pager {
  readonly previous: HTMLButtonElement;
  readonly next: HTMLButtonElement;
  /** The first row of the page to load. */
  offset(): number;
  /** After a load: shows Previous past the first page, Next while rows remain. */
  shown(rows: number, total: number): void;
}

/** A pager of `size` rows that calls `reload` on each move, and on `filters`' submit from the first page. */
export function pager(size: number, filters: HTMLFormElement, reload: () => void): Pager {
  const previous = h('button', { type: 'button', class: 'secondary' }, 'Previous page');
  const next = h('button', { type: 'button', class: 'secondary' }, 'Next page');
  let offset = 0;
  const move = (to: number) => {
    offset = Math.max(0, to);
    reload();
  };
  filters.addEventListener('submit', (submitted) => {
    submitted.preventDefault();
    move(0);
  });
  previous.addEventListener('click', () => move(offset - size));
  next.addEventListener('click', () => move(offset + size));
  return {
    previous,
    next,
    offset: () => offset,
    shown: (rows, total) => {
      previous.hidden = offset === 0;
      next.hidden = offset + rows >= total;
    },
  };
}
