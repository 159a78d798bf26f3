/** The console's shell: who is signed in, sign-in and sign-out, and a hash router over the pages. */
import { api, ApiError, useCsrfToken } from './api.js';
import { connectedAppsPage } from './connected-apps.js';
import { clearNotice, h, notify } from './dom.js';
import { executionPage, executionsPage } from './executions.js';
import { keysPage } from './keys.js';
import { membersPage } from './members.js';
import { schedulePage, schedulesPage } from './schedules.js';
import { secretsPage } from './secrets.js';
import { toolPage, toolsPage } from './tools.js';
import { triggerPage, triggersPage } from './triggers.js';
import { upstreamsPage } from './upstreams.js';
import { usagePage } from './usage.js';
import { webhookPage } from './webhook-deliveries.js';
import { webhooksPage } from './webhooks.js';
import { runPage } from './workflow-run.js';
import { workflowPage, workflowsPage } from './workflows.js';

interface Me {
  account: { id: string; name: string; tier: string };
  session: { id: string; expires_at: string; scopes: string[] };
  csrf_token: string;
}

/** A page draws into `main`; what it returns is called when the user leaves it (closes streams). */
type Page = (main: HTMLElement, arg: string | undefined) => Promise<(() => void) | void>;

let main = document.getElementById('main')!;
let leave: (() => void) | void;

function pageFor(section: string, arg: string | undefined): Page | undefined {
  switch (section) {
    case 'keys': return keysPage;
    case 'secrets': return secretsPage;
    case 'executions': return arg ? executionPage : executionsPage;
    case 'tools': return arg ? toolPage : toolsPage;
    case 'usage': return usagePage;
    case 'webhooks': return arg ? webhookPage : webhooksPage;
    case 'connected-apps': return connectedAppsPage;
    case 'members': return membersPage;
    case 'upstreams': return upstreamsPage;
    case 'workflows': return arg ? workflowPage : workflowsPage;
    case 'runs': return arg ? runPage : undefined;
    case 'schedules': return arg ? schedulePage : schedulesPage;
    case 'triggers': return arg ? triggerPage : triggersPage;
    default: return undefined;
  }
}

/** `#/section/arg` */
function location(): [string, string | undefined] {
  const [section = '', arg] = window.location.hash.replace(/^#\/?/, '').split('/');
  return [section, arg ? decodeURIComponent(arg) : undefined];
}

async function route(): Promise<void> {
  leave?.();
  leave = undefined;
  clearNotice();
  const [section, arg] = location();
  if (section === 'sign-in' && arg) return signInPage(arg);
  const page = pageFor(section, arg);
  if (!page) {
    window.location.replace('#/keys');
    return;
  }
  for (const link of document.querySelectorAll<HTMLAnchorElement>('#nav a')) {
    if (link.getAttribute('href') === `#/${section}`) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  // Each visit draws into a fresh <main>: a page still loading when the user moves on draws into
  // its own, detached one, never beside the next page.
  const view = main.cloneNode(false) as HTMLElement;
  main.replaceWith(view);
  main = view;
  try {
    const stop = await page(view, arg);
    if (view !== main) return stop?.(); // left while it loaded: its streams close at once
    leave = stop;
  } catch (error) {
    if (view !== main) return;
    if (error instanceof ApiError && error.status === 401) return signedOut(error.message);
    view.append(h('p', { class: 'error-text' }, error instanceof ApiError ? error.describe() : String(error)));
  }
  view.focus();
}

function signedIn(me: Me): void {
  useCsrfToken(me.csrf_token);
  const nav = document.getElementById('nav')!;
  nav.hidden = false;
  // A section that needs a scope is offered only to a session holding it (the API refuses the rest anyway).
  for (const link of nav.querySelectorAll<HTMLAnchorElement>('a[data-scope]')) link.hidden = !me.session.scopes.includes(link.dataset.scope!);
  document.getElementById('who')!.replaceChildren(
    h('span', {}, `${me.account.name} · ${me.account.tier}`),
    h('button', { type: 'button', class: 'secondary', onClick: signOut }, 'Sign out'),
  );
}

async function signOut(): Promise<void> {
  await api('DELETE', '/console/session');
  signedOut('You signed out.');
}

function signedOut(reason: string): void {
  leave?.();
  document.getElementById('nav')!.hidden = true;
  document.getElementById('who')!.replaceChildren();
  main.replaceChildren(
    h('h1', {}, 'Not signed in'),
    h('p', {}, reason),
    h('p', {}, 'Sign in with a one-time link. An operator makes one with ', h('code', {}, 'tos console link --account <name>'), '; an account holder with a key that holds keys:manage with ', h('code', {}, 'POST /v1/console/links'), '.'),
  );
  main.focus();
  void offerSingleSignOn(main);
}

/** The operator's identity provider, when one is configured (GET /console/sso answers 404 when not). */
async function offerSingleSignOn(page: HTMLElement): Promise<void> {
  let sso: { provider: string; start_url: string };
  try {
    sso = await api('GET', '/console/sso');
  } catch {
    return;
  }
  if (page !== main || !page.isConnected) return;
  page.insertBefore(h('p', {}, h('a', { href: sso.start_url, class: 'button' }, `Sign in with ${sso.provider}`)), page.children[2] ?? null);
}

/** The link's token stays in the fragment (never sent to the server by the browser) until the button spends it. */
function signInPage(token: string): void {
  const button = h('button', { type: 'button' }, 'Sign in');
  main.replaceChildren(
    h('h1', {}, 'Sign in to the console'),
    h('p', {}, 'This link signs this browser in to your account. It works once, for a few minutes.'),
    button,
  );
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      const me = await api<Me>('POST', '/console/session', { token });
      history.replaceState(null, '', '/console#/keys');
      signedIn(me);
      await route();
    } catch (error) {
      button.disabled = false;
      notify(error instanceof ApiError ? error.describe() : String(error), 'error');
    }
  });
  button.focus();
}

async function boot(): Promise<void> {
  window.addEventListener('hashchange', () => void route());
  if (location()[0] !== 'sign-in') {
    try {
      signedIn(await api<Me>('GET', '/console/session'));
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return signedOut('Your session is over, or you have not signed in yet.');
      throw error;
    }
  }
  await route();
}

void boot();
