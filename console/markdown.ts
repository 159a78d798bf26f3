/**
 * Markdown (tool descriptions and docs) drawn as DOM nodes from marked's tokens: text always goes
 * in as text and raw HTML is shown as text, so nothing a tool author wrote runs as markup.
 */
import { lexer, type Token, type Tokens } from 'marked';
import { h, type Child } from './dom.js';

/** Only these link targets become links; anything else (javascript:, data:) stays text. */
const SAFE_LINK = /^(https?:|mailto:|#|\/)/i;

export function markdown(source: string): HTMLElement {
  return h('div', { class: 'markdown' }, ...blocks(lexer(source)));
}

function blocks(tokens: Token[]): Child[] {
  return tokens.map(block);
}

function block(token: Token): Child {
  switch (token.type) {
    case 'heading': {
      // Headings sit under the page's own h1 and h2.
      const level = Math.min(6, (token as Tokens.Heading).depth + 2) as 3 | 4 | 5 | 6;
      return h(`h${level}`, {}, ...inline((token as Tokens.Heading).tokens));
    }
    case 'paragraph':
      return h('p', {}, ...inline((token as Tokens.Paragraph).tokens));
    case 'code':
      return h('pre', {}, h('code', {}, (token as Tokens.Code).text));
    case 'blockquote':
      return h('blockquote', {}, ...blocks((token as Tokens.Blockquote).tokens));
    case 'list': {
      const list = token as Tokens.List;
      return h(list.ordered ? 'ol' : 'ul', {}, ...list.items.map((item) => h('li', {}, ...blocks(item.tokens))));
    }
    case 'table': {
      const table = token as Tokens.Table;
      const cells = (row: Tokens.TableCell[], tag: 'th' | 'td') => h('tr', {}, ...row.map((cell) => h(tag, tag === 'th' ? { scope: 'col' } : {}, ...inline(cell.tokens))));
      return h('table', {}, h('thead', {}, cells(table.header, 'th')), h('tbody', {}, ...table.rows.map((row) => cells(row, 'td'))));
    }
    case 'hr':
      return h('hr');
    case 'space':
      return null;
    case 'text': {
      const text = token as Tokens.Text;
      return text.tokens ? h('p', {}, ...inline(text.tokens)) : h('p', {}, text.text);
    }
    default:
      return h('p', {}, token.raw);
  }
}

function inline(tokens: Token[] | undefined): Child[] {
  return (tokens ?? []).map((token): Child => {
    switch (token.type) {
      case 'strong':
        return h('strong', {}, ...inline((token as Tokens.Strong).tokens));
      case 'em':
        return h('em', {}, ...inline((token as Tokens.Em).tokens));
      case 'del':
        return h('del', {}, ...inline((token as Tokens.Del).tokens));
      case 'codespan':
        return h('code', {}, (token as Tokens.Codespan).text);
      case 'br':
        return h('br');
      case 'link': {
        const link = token as Tokens.Link;
        const children = inline(link.tokens);
        return SAFE_LINK.test(link.href) ? h('a', { href: link.href, rel: 'noopener noreferrer' }, ...children) : h('span', {}, ...children);
      }
      case 'text':
        return (token as Tokens.Text).tokens ? h('span', {}, ...inline((token as Tokens.Text).tokens)) : decode((token as Tokens.Text).text);
      case 'escape':
        return (token as Tokens.Escape).text;
      default:
        return token.raw;
    }
  });
}

/** Markdown lets HTML entities through (`&amp;`); drawn as text, the common ones are decoded as a browser would. */
function decode(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39);/g, (_, entity: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[entity]!);
}
