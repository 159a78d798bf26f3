/** Members: the people single sign-on admitted to this account (docs/authorization.md#members), and their removal. */
import { api, ApiError } from './api.js';
import { h, notify, table, when } from './dom.js';

interface Member {
  id: string;
  issuer: string;
  subject: string;
  email: string | null;
  role: string;
  created_at: string;
  last_sign_in_at: string;
}

export async function membersPage(main: HTMLElement): Promise<void> {
  const list = h('div');
  const refresh = async () => {
    const { members } = await api<{ members: Member[] }>('GET', '/v1/console/members');
    list.replaceChildren(
      members.length === 0
        ? h('p', {}, 'Nobody has signed in with the identity provider yet.')
        : table(
            `${members.length} signed in with the identity provider`,
            ['Who', 'Role', 'Joined', 'Last sign-in', 'Actions'],
            members.map((member) => [h('div', {}, member.email ?? member.subject, h('div', { class: 'hint' }, h('code', {}, member.subject))), member.role, when(member.created_at), when(member.last_sign_in_at), removeButton(member)]),
          ),
    );
  };
  const removeButton = (member: Member) => {
    const who = member.email ?? member.subject;
    const remove = async () => {
      try {
        await api('DELETE', `/v1/console/members/${encodeURIComponent(member.id)}`);
        notify(`Removed ${who}`);
        await refresh();
      } catch (error) {
        notify(error instanceof ApiError ? error.describe() : String(error), 'error');
      }
    };
    return h('button', { type: 'button', class: 'danger', 'aria-label': `Remove ${who}`, onClick: () => confirm(`Remove ${who}? Their console sessions end now; a rule that still admits them makes them a member again at their next sign-in.`) && void remove() }, 'Remove');
  };

  main.append(
    h('h1', {}, 'Members'),
    h('p', { class: 'hint' }, 'People the claim rules admitted to this account when they signed in with the identity provider, with the role the matching rule gave. Leaving the group ends their access at their next sign-in; removing them here ends it now.'),
    list,
  );
  await refresh();
}
