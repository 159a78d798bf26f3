/**
 * Connected apps: the OAuth clients the account allowed on the built-in authorization server's
 * consent page (docs/console.md#connected-apps), with what each may do, and revocation.
 */
import { api, ApiError } from './api.js';
import { h, notify, table, when } from './dom.js';

interface Grant {
  id: string;
  client_id: string;
  client_name: string | null;
  client_uri: string | null;
  resources: Record<string, string[]>;
  tools: string[] | null;
  created_at: string | null;
  last_used_at: string | null;
}

/** A client's home page is linked only when it is http(s): a metadata document may say anything. */
function clientCell(grant: Grant): HTMLElement {
  const name = grant.client_name ?? grant.client_id;
  const uri = grant.client_uri && /^https?:\/\//i.test(grant.client_uri) ? grant.client_uri : null;
  return h(
    'div',
    {},
    h('strong', {}, name),
    uri && h('div', {}, h('a', { href: uri, rel: 'noreferrer noopener', target: '_blank' }, uri)),
    name !== grant.client_id && h('div', { class: 'hint' }, h('code', {}, grant.client_id)),
  );
}

function accessCell(grant: Grant): HTMLElement {
  return h('ul', { class: 'plain' }, ...Object.entries(grant.resources).map(([resource, scopes]) => h('li', {}, h('code', {}, resource), `: ${scopes.join(', ') || 'no scope'}`)));
}

export async function connectedAppsPage(main: HTMLElement): Promise<void> {
  const list = h('div');
  const refresh = async () => {
    const { grants } = await api<{ grants: Grant[] }>('GET', '/v1/oauth/grants');
    list.replaceChildren(
      grants.length === 0
        ? h('p', {}, 'No connected apps.')
        : table(
            `${grants.length} connected`,
            ['App', 'Access', 'Tools', 'Allowed', 'Last used', 'Actions'],
            grants.map((grant) => [clientCell(grant), accessCell(grant), grant.tools ? grant.tools.join(', ') || 'none' : 'all you may call', when(grant.created_at), when(grant.last_used_at), revokeButton(grant)]),
          ),
    );
  };
  const revokeButton = (grant: Grant) => {
    const name = grant.client_name ?? grant.client_id;
    return h(
      'button',
      {
        type: 'button',
        class: 'danger',
        'aria-label': `Revoke ${name}`,
        onClick: () =>
          confirm(`Revoke ${name}? It can no longer refresh its tokens; the access token it holds stops within 5 minutes.`) &&
          void (async () => {
            try {
              await api('DELETE', `/v1/oauth/grants/${encodeURIComponent(grant.id)}`);
              notify(`Revoked ${name}`);
              await refresh();
            } catch (error) {
              notify(error instanceof ApiError ? error.describe() : String(error), 'error');
            }
          })(),
      },
      'Revoke',
    );
  };

  main.append(
    h('h1', {}, 'Connected apps'),
    h(
      'ul',
      { class: 'hint' },
      h('li', {}, 'Applications and agents you allowed to act for this account through OAuth (docs/authorization.md): what they may reach, with which scopes and tools.'),
      h('li', {}, 'Revoking one ends its refresh tokens at once; an access token it already holds lasts at most 5 minutes. It must ask you again to come back.'),
    ),
    list,
  );
  await refresh();
}
