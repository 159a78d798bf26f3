/** The one time a secret is ever shown: a box with the secret, a copy button, and what to do now. */
import { h, notify } from './dom.js';

/** `title` says whose secret it is; `note` how it is kept and what to do with it. */
export function showSecret(slot: HTMLElement, title: string, secret: string, note: string): void {
  const code = h('code', {}, secret);
  const copy = h('button', { type: 'button', class: 'secondary' }, 'Copy secret');
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(secret);
      notify('The secret is on the clipboard.');
    } catch {
      getSelection()?.selectAllChildren(code);
      notify('The browser refused the clipboard: the secret is selected, copy it with Ctrl+C.', 'error');
    }
  });
  slot.replaceChildren(h('section', { class: 'secret-box', 'aria-label': 'New secret' }, h('p', {}, h('strong', {}, `${title}: copy it now.`), ` It is shown only this once; ${note}`), code, copy));
  copy.focus();
}
