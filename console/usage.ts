/** Usage: this session's request window, the account's monthly calls, the tier. */
import { api } from './api.js';
import { h, when } from './dom.js';

interface Usage {
  tier: string;
  window: { limit: number; used: number; resets_at: string };
  month: { limit: number | null; used: number; resets_at: string };
}

function gauge(label: string, used: number, limit: number | null): HTMLElement {
  const text = limit === null ? `${used} (no cap)` : `${used} of ${limit}`;
  return h('dd', {}, limit === null ? null : h('meter', { min: 0, max: limit, value: used, high: limit * 0.8, 'aria-label': label }), ' ', text);
}

export async function usagePage(main: HTMLElement): Promise<void> {
  const usage = await api<Usage>('GET', '/v1/usage');
  main.append(
    h('h1', {}, 'Usage'),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Tier'),
      h('dd', {}, usage.tier),
      h('dt', {}, 'Requests in the current minute'),
      gauge('Requests in the current minute', usage.window.used, usage.window.limit),
      h('dt', {}, 'Next request slot frees'),
      h('dd', {}, when(usage.window.resets_at)),
      h('dt', {}, 'Tool calls this month'),
      gauge('Tool calls this month', usage.month.used, usage.month.limit),
      h('dt', {}, 'Monthly quota resets'),
      h('dd', {}, when(usage.month.resets_at)),
    ),
    h('p', { class: 'hint' }, 'The request window is per key; this console counts as its own key. The monthly quota is shared by every key of the account.'),
  );
}
