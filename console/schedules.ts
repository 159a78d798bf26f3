/** Schedules: the list with next run times, create, pause and resume, delete; one schedule's runs (docs/orchestration.md#schedules). */
import { api, ApiError, query } from './api.js';
import { count, field, h, notify, table, when } from './dom.js';
import { runAsField, runHref, Target, targetFields, targetLabel, workflowNames } from './target-fields.js';

interface Schedule {
  id: string;
  target: Target;
  cron: string;
  timezone: string;
  overlap: string;
  catch_up: string;
  paused: boolean;
  paused_reason: string | null;
  next_run_at: string | null;
  next_runs: string[];
  key_id: string;
  created_at: string;
}

interface ScheduleRun {
  id: string;
  tick_at: string;
  status: string;
  reason: string | null;
  execution_id: string | null;
  execution_status: string | null;
}

const PAGE_SIZE = 100;
const RUNS_SHOWN = 50;
const OVERLAP = ['skip', 'queue', 'allow'];
const CATCH_UP = ['none', 'last'];

const describe = (error: unknown) => (error instanceof ApiError ? error.describe() : String(error));
const schedulePath = (id: string) => `/v1/schedules/${encodeURIComponent(id)}`;

/** Runs a change, says so, and redraws; the API's refusal is shown as its envelope says it. */
async function change(done: string, call: () => Promise<unknown>, refresh: () => Promise<void>): Promise<void> {
  try {
    await call();
    notify(done);
    await refresh();
  } catch (error) {
    notify(describe(error), 'error');
  }
}

function state(schedule: Schedule): string {
  return schedule.paused ? `paused${schedule.paused_reason ? `: ${schedule.paused_reason}` : ''}` : 'active';
}

export async function schedulesPage(main: HTMLElement): Promise<void> {
  const names = await workflowNames();
  const [target, runAs] = await Promise.all([targetFields(names), runAsField()]);
  const list = h('div');
  const refresh = async () => {
    const { schedules, total, max_schedules } = await api<{ schedules: Schedule[]; total: number; max_schedules: number }>('GET', `/v1/schedules${query({ limit: PAGE_SIZE })}`);
    list.replaceChildren(
      schedules.length === 0
        ? h('p', {}, 'No schedules yet.')
        : table(
            `${count(total, 'schedule')} of at most ${max_schedules}, newest first`,
            ['Target', 'When', 'Next runs', 'Overlap · catch-up', 'State', 'Actions'],
            schedules.map((s) => [
              h('a', { href: `#/schedules/${s.id}` }, targetLabel(s.target, names)),
              h('span', {}, h('code', {}, s.cron), ` (${s.timezone})`),
              s.next_runs.length === 0 ? '—' : h('ol', { class: 'next-runs', 'aria-label': `Next runs of ${s.id}` }, ...s.next_runs.map((at) => h('li', {}, when(at)))),
              `${s.overlap} · ${s.catch_up}`,
              h('span', { class: s.paused ? 'status status-cancelled' : 'status status-success' }, state(s)),
              h(
                'div',
                { class: 'actions' },
                s.paused
                  ? h('button', { type: 'button', class: 'secondary', 'aria-label': `Resume ${s.id}`, onClick: () => void change(`Schedule ${s.id} resumed.`, () => api('PATCH', schedulePath(s.id), { paused: false, key_id: runAs.read() }), refresh) }, 'Resume')
                  : h('button', { type: 'button', class: 'secondary', 'aria-label': `Pause ${s.id}`, onClick: () => void change(`Schedule ${s.id} paused.`, () => api('PATCH', schedulePath(s.id), { paused: true }), refresh) }, 'Pause'),
                h('button', { type: 'button', class: 'danger', 'aria-label': `Delete ${s.id}`, onClick: () => confirm(`Delete schedule ${s.id}? Its runs' executions stay.`) && void change(`Schedule ${s.id} deleted.`, () => api('DELETE', schedulePath(s.id)), refresh) }, 'Delete'),
              ),
            ]),
          ),
    );
  };

  const cron = h('input', { type: 'text', required: true, maxlength: 120, autocomplete: 'off', placeholder: '30 2 * * *' });
  const timezone = h('input', { type: 'text', maxlength: 64, autocomplete: 'off', value: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC' });
  const overlap = h('select', {}, ...OVERLAP.map((o) => h('option', { value: o }, o)));
  const catchUp = h('select', {}, ...CATCH_UP.map((c) => h('option', { value: c }, c)));
  const paused = h('input', { type: 'checkbox' });
  const form = h(
    'form',
    { class: 'panel', 'aria-label': 'New schedule' },
    h('h2', {}, 'New schedule'),
    target.element,
    h('div', { class: 'row' }, field('Cron', cron, 'Five fields, minute first (or six, seconds first).'), field('Time zone', timezone, 'IANA, e.g. Europe/Berlin.'), field('Overlap', overlap, 'A tick while the last run is still going.'), field('Catch up', catchUp, 'Ticks missed while the service was down.')),
    h('div', { class: 'row' }, runAs.element, h('label', { class: 'inline' }, paused, ' Create it paused')),
    h('button', { type: 'submit' }, 'Create schedule'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    let body: Record<string, unknown>;
    try {
      body = { target: target.read(), cron: cron.value.trim(), timezone: timezone.value.trim() || 'UTC', overlap: overlap.value, catch_up: catchUp.value, paused: paused.checked, key_id: runAs.read() };
    } catch {
      return;
    }
    void change('Schedule created.', () => api('POST', '/v1/schedules', body), refresh);
  });

  main.append(h('h1', {}, 'Schedules'), list, form);
  await refresh();
}

export async function schedulePage(main: HTMLElement, id: string | undefined): Promise<void> {
  const [schedule, names] = await Promise.all([api<Schedule>('GET', schedulePath(id!)), workflowNames()]);
  const { runs, total } = await api<{ runs: ScheduleRun[]; total: number }>('GET', `${schedulePath(id!)}/runs${query({ limit: RUNS_SHOWN })}`);
  main.append(
    h('p', {}, h('a', { href: '#/schedules' }, '← All schedules')),
    h('h1', {}, `Schedule ${schedule.id}`),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Target'), h('dd', {}, targetLabel(schedule.target, names)),
      h('dt', {}, 'When'), h('dd', {}, h('code', {}, schedule.cron), ` (${schedule.timezone})`),
      h('dt', {}, 'State'), h('dd', {}, state(schedule)),
      h('dt', {}, 'Next run'), h('dd', {}, when(schedule.next_run_at)),
      h('dt', {}, 'Runs as'), h('dd', {}, h('code', {}, schedule.key_id)),
    ),
    h('h2', {}, 'Runs'),
    runs.length === 0
      ? h('p', {}, 'No runs yet.')
      : table(
          `The newest ${runs.length} of ${total}`,
          ['Tick', 'Status', 'Why', 'Execution'],
          runs.map((r) => [when(r.tick_at), h('span', { class: `status status-${r.status}` }, r.status), r.reason ?? '', r.execution_id ? h('a', { href: runHref(schedule.target, r.execution_id) }, h('code', {}, r.execution_id), r.execution_status ? ` (${r.execution_status})` : '') : '—']),
        ),
  );
}
