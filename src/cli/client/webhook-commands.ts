/** `tos webhooks …`: the account's webhook subscriptions and their delivery log (docs/cli.md#tos-webhooks, docs/API.md#webhooks). */
import { Command, Option } from 'commander';
import { ClientError, EXIT } from './api-client';
import { addListOptions, id, listed, runClient } from './commands';
import { examples } from './help';
import { addOutputOptions } from './output';
import { DELIVERY_VIEW, WEBHOOK_VIEW } from './views';

/** Said under a secret in text mode: the service keeps it sealed and never shows it again. */
const SHOWN_ONCE = 'Save this signing secret now: it is shown only this once (rotate the secret to get a new one).';

const commaList = (value: string): string[] => value.split(',').map((s) => s.trim()).filter(Boolean);

/** The fields of create and update the options name (update sends only those given). */
function subscriptionFields(o: { url?: string; events?: string[]; toolIds?: string[]; allTools?: boolean; description?: string }): Record<string, unknown> {
  if (o.toolIds && o.allTools) throw new ClientError('USAGE', '--tool-ids and --all-tools exclude each other', 'name the tools, or --all-tools for every tool', EXIT.usage);
  return { url: o.url, events: o.events, tool_ids: o.allTools ? null : o.toolIds, description: o.description };
}

/** --url, --events, --tool-ids and --description: required (create) or each optional (update). */
function withSubscriptionOptions(command: Command, required: boolean): Command {
  return command
    .addOption(new Option('--url <url>', 'where to POST each event (http or https)').makeOptionMandatory(required))
    .addOption(new Option('--events <names>', 'comma-separated: execution.completed, execution.failed, execution.cancelled, execution.input_required, webhook.disabled').argParser(commaList).makeOptionMandatory(required))
    .option('--tool-ids <ids>', "only these tools' executions, comma-separated (default: every tool)", commaList)
    .option('--description <text>', 'a note for people');
}

export function registerWebhookCommands(program: Command): void {
  const webhooks = program.command('webhooks').description('signed webhook subscriptions of your account and their delivery log (needs webhooks:manage)');

  examples(
    addOutputOptions(
      withSubscriptionOptions(webhooks.command('create').description('subscribe a URL to execution events; prints the signing secret once'), true),
      WEBHOOK_VIEW,
    ),
    ['tos webhooks create --url https://hooks.example.com/tos --events execution.completed,execution.failed', "tos webhooks create --url https://hooks.example.com/tos --events execution.completed --tool-ids secret-scan --jq '.secret'"],
  ).action((o) =>
    runClient(o, WEBHOOK_VIEW, async (c) => ({ result: await c.request('POST', '/v1/webhooks', { body: subscriptionFields(o) }), hint: SHOWN_ONCE })),
  );

  examples(addOutputOptions(addListOptions(webhooks.command('list').description("this account's subscriptions: URL, events, enabled or why not")), WEBHOOK_VIEW), [
    'tos webhooks list',
    'tos webhooks list --json id,url,enabled,disabled_reason',
  ]).action((o) => runClient(o, WEBHOOK_VIEW, (c) => listed(c, '/v1/webhooks', new URLSearchParams(), 'webhooks', o)));

  examples(addOutputOptions(webhooks.command('show <webhook_id>').description('one subscription (never its secret)'), WEBHOOK_VIEW), ['tos webhooks show wh_…']).action(
    (webhookId: string, o) => runClient(o, WEBHOOK_VIEW, async (c) => ({ result: await c.request('GET', `/v1/webhooks/${id(webhookId)}`) })),
  );

  examples(
    addOutputOptions(
      withSubscriptionOptions(webhooks.command('update <webhook_id>').description('change the URL, events, tools or description; --enable re-enables one the service disabled'), false)
        .option('--all-tools', 'every tool again (clears --tool-ids)')
        .addOption(new Option('--enable', 'deliver again (after a pause, a 410 or an exhausted schedule)').conflicts('disable'))
        .addOption(new Option('--disable', 'pause deliveries').conflicts('enable')),
      WEBHOOK_VIEW,
    ),
    ['tos webhooks update wh_… --enable', 'tos webhooks update wh_… --events execution.failed --all-tools'],
  ).action((webhookId: string, o) =>
    runClient(o, WEBHOOK_VIEW, async (c) => {
      const body = { ...subscriptionFields(o), enabled: o.enable ? true : o.disable ? false : undefined };
      if (Object.values(body).every((value) => value === undefined)) throw new ClientError('USAGE', 'nothing to change', 'give --url, --events, --tool-ids, --all-tools, --description, --enable or --disable', EXIT.usage);
      return { result: await c.request('PATCH', `/v1/webhooks/${id(webhookId)}`, { body }) };
    }),
  );

  examples(addOutputOptions(webhooks.command('delete <webhook_id>').description('delete a subscription and its delivery log')), ['tos webhooks delete wh_…']).action(
    (webhookId: string, o) =>
      runClient(o, {}, async (c) => {
        await c.request('DELETE', `/v1/webhooks/${id(webhookId)}`);
        return { result: { deleted: webhookId } };
      }),
  );

  examples(
    addOutputOptions(webhooks.command('rotate <webhook_id>').description('a new signing secret, printed once; the old one keeps signing beside it until previous_secret_expires_at'), WEBHOOK_VIEW),
    ['tos webhooks rotate wh_…', "tos webhooks rotate wh_… --jq '.secret'"],
  ).action((webhookId: string, o) =>
    runClient(o, WEBHOOK_VIEW, async (c) => ({ result: await c.request('POST', `/v1/webhooks/${id(webhookId)}/rotate-secret`), hint: SHOWN_ONCE })),
  );

  examples(addOutputOptions(webhooks.command('test <webhook_id>').description('send a ping event now; it shows in the delivery log'), DELIVERY_VIEW), ['tos webhooks test wh_…']).action(
    (webhookId: string, o) => runClient(o, DELIVERY_VIEW, async (c) => ({ result: await c.request('POST', `/v1/webhooks/${id(webhookId)}/test`) })),
  );

  examples(
    addOutputOptions(
      addListOptions(
        webhooks
          .command('deliveries <webhook_id>')
          .description("a subscription's delivery log, newest first (every attempt's time, status code, latency and answer with --json)")
          .option('--status <status>', 'only pending, delivered or failed')
          .option('--event <name>', 'only this event (execution.completed, …, webhook.disabled, ping)'),
      ),
      DELIVERY_VIEW,
    ),
    ['tos webhooks deliveries wh_…', 'tos webhooks deliveries wh_… --status failed --event execution.completed --limit 10', "tos webhooks deliveries wh_… --jq '.[0].attempts'"],
  ).action((webhookId: string, o) =>
    runClient(o, DELIVERY_VIEW, (c) => {
      const query = new URLSearchParams();
      for (const key of ['status', 'event'] as const) if (o[key]) query.set(key, o[key]);
      return listed(c, `/v1/webhooks/${id(webhookId)}/deliveries`, query, 'deliveries', o);
    }),
  );

  examples(
    addOutputOptions(webhooks.command('redeliver <webhook_id> <delivery_id>').description('send a delivery again from the start of the schedule, under the same webhook-id'), DELIVERY_VIEW),
    ['tos webhooks redeliver wh_… msg_…'],
  ).action((webhookId: string, deliveryId: string, o) =>
    runClient(o, DELIVERY_VIEW, async (c) => ({ result: await c.request('POST', `/v1/webhooks/${id(webhookId)}/deliveries/${id(deliveryId)}/redeliver`) })),
  );
}
