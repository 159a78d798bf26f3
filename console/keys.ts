/** Keys: create (type, name, scopes, tools, expiry), the secret shown once, rotate, regenerate, revoke. */
import { api, ApiError } from './api.js';
import { count, field, h, notify, table, when } from './dom.js';
import { showSecret } from './secret-box.js';

interface KeyRecord {
  id: string;
  name: string;
  type: 'user' | 'service' | 'temporary';
  prefix: string;
  last4: string;
  scopes: string[];
  tool_ids: string[] | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}
type IssuedKey = KeyRecord & { key: string };

export async function keysPage(main: HTMLElement): Promise<void> {
  const [{ session }, { tools }] = await Promise.all([
    api<{ session: { scopes: string[] } }>('GET', '/console/session'),
    api<{ tools: { id: string; name: string }[] }>('GET', '/v1/tools?limit=100'),
  ]);
  const secretSlot = h('div');
  const list = h('div');
  const refresh = async () => list.replaceChildren(keyTable((await api<{ keys: KeyRecord[] }>('GET', '/v1/keys?limit=100')).keys, act));

  /** Runs a key action, shows a new secret if it made one, and redraws the list. */
  const act = async (label: string, call: () => Promise<KeyRecord | IssuedKey>) => {
    try {
      const record = await call();
      if ('key' in record) showSecret(secretSlot, `Secret of ${record.name}`, record.key, 'the service keeps only its hash.');
      else notify(`${label} done: ${record.name} (${record.id})`);
      await refresh();
    } catch (error) {
      notify(error instanceof ApiError ? error.describe() : String(error), 'error');
    }
  };

  main.append(
    h('h1', {}, 'API keys'),
    h(
      'ul',
      { class: 'hint' },
      h('li', {}, 'User keys are for development: regenerating one issues a new secret and the old one stops working at once.'),
      h('li', {}, 'Service keys are for production and never expire: rotating one issues a new key and the old one keeps working until you revoke it, so you can deploy the new one first.'),
      h('li', {}, 'Temporary keys expire after the time you choose (at most 24 hours) and cannot be revoked; they cannot manage keys or secrets.'),
    ),
    secretSlot,
    createForm(session.scopes, tools, (body) => act('Created', () => api<IssuedKey>('POST', '/v1/keys', body))),
    h('h2', {}, 'Your keys'),
    list,
  );
  await refresh();
}

const CREDENTIAL_SCOPES = ['keys:manage', 'secrets:manage'];

function createForm(scopes: string[], tools: { id: string; name: string }[], create: (body: Record<string, unknown>) => Promise<void>): HTMLFormElement {
  const name = h('input', { type: 'text', name: 'name', required: true, maxlength: 100, autocomplete: 'off' });
  const type = h('select', { name: 'type' }, h('option', { value: 'service' }, 'service'), h('option', { value: 'user' }, 'user'), h('option', { value: 'temporary' }, 'temporary'));
  const expiresIn = h('input', { type: 'number', name: 'expires_in', min: 1, max: 86400, step: 1 });
  const scopeBoxes = scopes.map((scope) => h('input', { type: 'checkbox', name: 'scopes', value: scope, checked: true }));
  const toolSelect = h('select', { name: 'tool_ids', multiple: true }, ...tools.map((tool) => h('option', { value: tool.id }, `${tool.name} (${tool.id})`)));
  const form = h(
    'form',
    { class: 'panel', 'aria-labelledby': 'create-key-heading' },
    h('h2', { id: 'create-key-heading' }, 'Create a key'),
    h('div', { class: 'row' }, field('Name', name), field('Type', type), field('Expires in (seconds)', expiresIn, 'Temporary keys only, 1 to 86400.')),
    h('fieldset', {}, h('legend', {}, 'Scopes'), ...scopeBoxes.map((box) => h('label', {}, box, box.value))),
    field('Tool allowlist', toolSelect, 'Select none to allow every tool you may use; Ctrl or Shift to select several.'),
    h('button', { type: 'submit' }, 'Create key'),
  );
  // Temporary keys never hold the credential scopes (DESIGN §5.7): they are not offered for one.
  type.addEventListener('change', () => {
    for (const box of scopeBoxes.filter(({ value }) => CREDENTIAL_SCOPES.includes(value))) {
      box.disabled = type.value === 'temporary';
      box.checked = !box.disabled;
    }
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const chosenTools = [...toolSelect.selectedOptions].map((option) => option.value);
    void create({
      name: name.value.trim(),
      type: type.value,
      scopes: scopeBoxes.filter((box) => box.checked).map((box) => box.value),
      ...(chosenTools.length > 0 && { tool_ids: chosenTools }),
      ...(type.value === 'temporary' && { expires_in: Number(expiresIn.value) }),
    }).then(() => form.reset());
  });
  return form;
}

function keyState(key: KeyRecord, now = Date.now()): string {
  if (key.revoked_at && Date.parse(key.revoked_at) <= now) return `revoked ${when(key.revoked_at)}`;
  if (key.expires_at && Date.parse(key.expires_at) <= now) return `expired ${when(key.expires_at)}`;
  if (key.revoked_at) return `rotated; valid until ${when(key.revoked_at)}`;
  return key.expires_at ? `active until ${when(key.expires_at)}` : 'active';
}

function keyTable(keys: KeyRecord[], act: (label: string, call: () => Promise<KeyRecord | IssuedKey>) => Promise<void>): HTMLElement {
  if (keys.length === 0) return h('p', {}, 'No keys yet.');
  return table(
    `${count(keys.length, 'key')}, newest first`,
    ['Name', 'Key', 'Type', 'Scopes', 'Tools', 'Last used', 'State', 'Actions'],
    keys.map((key) => [
      key.name,
      h('code', {}, `${key.prefix}…${key.last4}`),
      key.type,
      key.scopes.join(', '),
      key.tool_ids ? key.tool_ids.join(', ') : 'all',
      when(key.last_used_at),
      keyState(key),
      keyActions(key, act),
    ]),
  );
}

function keyActions(key: KeyRecord, act: (label: string, call: () => Promise<KeyRecord | IssuedKey>) => Promise<void>): HTMLElement {
  const path = `/v1/keys/${encodeURIComponent(key.id)}`;
  const active = keyState(key).startsWith('active');
  const button = (label: string, kind: string, confirmText: string, call: () => Promise<KeyRecord | IssuedKey>) =>
    h('button', { type: 'button', class: kind, 'aria-label': `${label} ${key.name}`, onClick: () => confirm(confirmText) && void act(label, call) }, label);
  if (key.type === 'temporary') return h('span', { class: 'hint' }, 'Cannot be revoked: it expires.');
  if (!active) return h('span');
  return h(
    'div',
    { class: 'actions' },
    key.type === 'user'
      ? button('Regenerate', 'secondary', `Regenerate ${key.name}? Its current secret stops working now.`, () => api('POST', `${path}/regenerate`, {}))
      : button('Rotate', 'secondary', `Rotate ${key.name}? A new key is issued; the old one keeps working until you revoke it.`, () => api('POST', `${path}/rotate`, {})),
    button('Revoke', 'danger', `Revoke ${key.name}? It stops working now.`, () => api('DELETE', path)),
  );
}
