/** `tos schedules …` and `tos triggers …` (docs/orchestration.md): what starts a tool without a caller. */
import { Command } from 'commander';
import { ClientError, EXIT } from './api-client';
import { addListOptions, id, listed, readInput, runClient } from './commands';
import { examples } from './help';
import { addOutputOptions, type OutputOptions } from './output';
import { SCHEDULE_RUN_VIEW, SCHEDULE_VIEW, TRIGGER_EVENT_VIEW, TRIGGER_VIEW } from './views';

interface TargetOptions {
  tool?: string;
  workflow?: string;
  input?: string;
}

/** `--tool` or `--workflow` (one of them), with `--input`. */
function targetOf(o: TargetOptions): Record<string, unknown> {
  if (!o.tool === !o.workflow) throw new ClientError('USAGE', 'name the target with --tool or --workflow (one of them)', "--tool json-transform --input '{\"expression\":\"1\",\"data\":{}}'", EXIT.usage);
  return { ...(o.tool ? { tool: o.tool } : { workflow: o.workflow }), inputs: readInput(o.input) };
}

function addTargetOptions(command: Command): Command {
  return command.option('--tool <tool_id>', 'start this tool').option('--workflow <id|name>', 'start a run of this workflow').option('--input <json|@file>', "the target's inputs as a JSON object, or @file.json");
}

const pausing = (paused: boolean) => (scheduleId: string, o: OutputOptions) =>
  runClient(o, SCHEDULE_VIEW, async (c) => ({ result: await c.request('PATCH', `/v1/schedules/${id(scheduleId)}`, { body: { paused } }) }));

const removing = (path: string) => (itemId: string, o: OutputOptions) =>
  runClient(o, {}, async (c) => {
    await c.request('DELETE', `${path}/${id(itemId)}`);
    return { result: { deleted: itemId } };
  });

export function registerOrchestrationCommands(program: Command): void {
  const schedules = program.command('schedules').description('run a tool (or workflow) on a cron schedule, as this key');
  examples(
    addOutputOptions(
      addTargetOptions(schedules.command('create').description('a new schedule; shows its next runs'))
        .requiredOption('--cron <expression>', 'five fields (minute first), or six with seconds')
        .option('--timezone <zone>', 'IANA time zone the expression is read in (default UTC)')
        .option('--overlap <policy>', 'a tick while the previous run is active: skip (default), queue or allow')
        .option('--catch-up <policy>', 'ticks missed while the service was down: none (default) or last')
        .option('--paused', 'create it paused'),
      SCHEDULE_VIEW,
    ),
    ["tos schedules create --tool secret-scan --input '{\"workspace\":\"ws_…\"}' --cron '30 2 * * *' --timezone Europe/Berlin"],
  ).action((o) =>
    runClient(o, SCHEDULE_VIEW, async (c) => ({
      result: await c.request('POST', '/v1/schedules', { body: { target: targetOf(o), cron: o.cron, timezone: o.timezone, overlap: o.overlap, catch_up: o.catchUp, paused: o.paused } }),
    })),
  );
  examples(addOutputOptions(addListOptions(schedules.command('list').description("this account's schedules")), SCHEDULE_VIEW), ['tos schedules list']).action((o) =>
    runClient(o, SCHEDULE_VIEW, (c) => listed(c, '/v1/schedules', new URLSearchParams(), 'schedules', o)),
  );
  examples(addOutputOptions(schedules.command('show <schedule_id>').description('one schedule and its next runs'), SCHEDULE_VIEW), ["tos schedules show sch_… --jq '.next_runs'"]).action(
    (scheduleId: string, o) => runClient(o, SCHEDULE_VIEW, async (c) => ({ result: await c.request('GET', `/v1/schedules/${id(scheduleId)}`) })),
  );
  examples(addOutputOptions(schedules.command('pause <schedule_id>').description('stop its runs until resumed'), SCHEDULE_VIEW), ['tos schedules pause sch_…']).action(pausing(true));
  examples(addOutputOptions(schedules.command('resume <schedule_id>').description('run again from the next tick, as this key'), SCHEDULE_VIEW), ['tos schedules resume sch_…']).action(pausing(false));
  examples(addOutputOptions(schedules.command('rm <schedule_id>').description('delete a schedule')), ['tos schedules rm sch_…']).action(removing('/v1/schedules'));
  examples(addOutputOptions(addListOptions(schedules.command('runs <schedule_id>').description('its runs, newest tick first: started, skipped, missed, refused or failed, and why')), SCHEDULE_RUN_VIEW), [
    'tos schedules runs sch_…',
  ]).action((scheduleId: string, o) => runClient(o, SCHEDULE_RUN_VIEW, (c) => listed(c, `/v1/schedules/${id(scheduleId)}/runs`, new URLSearchParams(), 'runs', o)));

  const triggers = program.command('triggers').description('start a tool (or workflow) on an inbound webhook or on this service’s own events');
  examples(
    addOutputOptions(
      addTargetOptions(triggers.command('create').description('a new trigger; an inbound one shows its URL and secret (this once)'))
        .option('--verify <type>', 'an inbound URL verified as github, gitlab, standard_webhooks or bearer')
        .option('--on <event>', 'or an internal trigger on execution.failed, execution.completed or execution.cancelled')
        .option('--of-tools <ids>', 'with --on: only executions of these tools, comma-separated', (v) => v.split(',').map((s) => s.trim()).filter(Boolean))
        .option('--filter <jsonata>', 'start only when this is true over { payload, headers }')
        .option('--map <input=jsonata>', 'an input taken from the event (repeatable)', (pair: string, previous: string[] = []) => [...previous, pair])
        .option('--description <text>', 'what it is for'),
      TRIGGER_VIEW,
    ),
    [
      "tos triggers create --tool secret-scan --verify github --filter \"headers.\\`x-github-event\\` = 'push'\" --map git_url=payload.repository.clone_url",
      'tos triggers create --tool chat-notify --on execution.failed --of-tools secret-scan --map text=payload.tool_id',
    ],
  ).action((o) =>
    runClient(o, TRIGGER_VIEW, async (c) => {
      const inputs = o.map && Object.fromEntries((o.map as string[]).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
      const body = {
        target: targetOf(o),
        ...(o.verify && { verification: { type: o.verify } }),
        ...(o.on && { source: { event: o.on, tool_ids: o.ofTools } }),
        filter: o.filter,
        inputs,
        description: o.description,
      };
      return { result: await c.request('POST', '/v1/triggers', { body }) };
    }),
  );
  examples(addOutputOptions(addListOptions(triggers.command('list').description("this account's triggers")), TRIGGER_VIEW), ['tos triggers list']).action((o) =>
    runClient(o, TRIGGER_VIEW, (c) => listed(c, '/v1/triggers', new URLSearchParams(), 'triggers', o)),
  );
  examples(addOutputOptions(triggers.command('show <trigger_id>').description('one trigger'), TRIGGER_VIEW), ['tos triggers show trg_…']).action((triggerId: string, o) =>
    runClient(o, TRIGGER_VIEW, async (c) => ({ result: await c.request('GET', `/v1/triggers/${id(triggerId)}`) })),
  );
  examples(addOutputOptions(triggers.command('rm <trigger_id>').description('delete a trigger (its URL answers 404 from then on)')), ['tos triggers rm trg_…']).action(removing('/v1/triggers'));
  examples(addOutputOptions(addListOptions(triggers.command('events <trigger_id>').description('its recent events, newest first: started, filtered, refused or failed, and why')), TRIGGER_EVENT_VIEW), [
    'tos triggers events trg_…',
  ]).action((triggerId: string, o) => runClient(o, TRIGGER_EVENT_VIEW, (c) => listed(c, `/v1/triggers/${id(triggerId)}/events`, new URLSearchParams(), 'events', o)));
}
