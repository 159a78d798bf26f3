/** Secrets: names only (values are write-only), set and delete. */
import { api, ApiError } from './api.js';
import { count, field, h, notify, table, when } from './dom.js';

interface SecretView {
  name: string;
  created_at: string;
  updated_at: string;
}

export async function secretsPage(main: HTMLElement): Promise<void> {
  const list = h('div');
  const refresh = async () => {
    const { secrets, limit } = await api<{ secrets: SecretView[]; limit: number }>('GET', '/v1/secrets');
    list.replaceChildren(
      secrets.length === 0
        ? h('p', {}, 'No secrets yet.')
        : table(`${secrets.length} of at most ${count(limit, 'secret')}`, ['Name', 'Created', 'Updated', 'Actions'], secrets.map((secret) => [h('code', {}, secret.name), when(secret.created_at), when(secret.updated_at), deleteButton(secret.name)])),
    );
  };
  const run = async (done: string, call: () => Promise<unknown>) => {
    try {
      await call();
      notify(done);
      await refresh();
    } catch (error) {
      notify(error instanceof ApiError ? error.describe() : String(error), 'error');
    }
  };
  const deleteButton = (name: string) =>
    h('button', { type: 'button', class: 'danger', 'aria-label': `Delete ${name}`, onClick: () => confirm(`Delete the secret ${name}? Tools that read it will no longer find it.`) && void run(`Deleted ${name}`, () => api('DELETE', `/v1/secrets/${encodeURIComponent(name)}`)) }, 'Delete');

  const name = h('input', { type: 'text', required: true, pattern: '[A-Za-z0-9_.\\-]{1,64}', autocomplete: 'off' });
  const value = h('input', { type: 'password', required: true, autocomplete: 'off' });
  const form = h(
    'form',
    { class: 'panel', 'aria-labelledby': 'set-secret-heading' },
    h('h2', { id: 'set-secret-heading' }, 'Set a secret'),
    h('div', { class: 'row' }, field('Name', name, '1 to 64 letters, digits, _, . or -; an existing name is replaced.'), field('Value', value, 'Write-only: nobody can read it back, not even here.')),
    h('button', { type: 'submit' }, 'Save secret'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void run(`Saved ${name.value}`, () => api('PUT', `/v1/secrets/${encodeURIComponent(name.value)}`, { value: value.value })).then(() => form.reset());
  });

  main.append(h('h1', {}, 'Secrets'), h('p', { class: 'hint' }, 'Credentials your tools read through their context (for example a chat webhook or a registry password), sealed at rest.'), form, h('h2', {}, 'Your secrets'), list);
  await refresh();
}
