import type { WebAPICallResult } from '@slack/web-api';
import { networkError, requestHeadersInput, Tool, ToolError, type ToolContext, type ToolHandler, defineTool, type ToolInput, type ToolOutput } from '@tos/sdk';

type Provider = 'slack_webhook' | 'slack_api' | 'teams_webhook' | 'discord_webhook';

type ChatNotifyInput = ToolInput<typeof definition>;

type ChatNotifyOutput = ToolOutput<typeof definition>;

const MAX_RESPONSE_BYTES = 64 * 1024;

const definition = defineTool({
  id: 'chat-notify',
  name: 'Chat Notify',
  category: 'integration',
  description:
    "Sends a message to a chat channel: a Slack incoming webhook or the Slack Web API (chat.postMessage, threads and blocks included), a Microsoft Teams or a Discord webhook. Webhook URLs are credentials: give one inline (redacted from stored executions) or name an account secret holding it; the Slack bot token is the account's SLACK_BOT_TOKEN secret, else the operator's.",
  version: '1.0.0',
  effects: 'write',
  idempotent: false,
  open_world: true,
  timeout: 60,
  rate_limit: 60,
  input: {
    type: 'object',
    properties: {
      provider: {
        type: 'string',
        enum: ['slack_webhook', 'slack_api', 'teams_webhook', 'discord_webhook'],
        default: 'slack_webhook',
        description: 'Where the message goes.',
      },
      text: { type: 'string', minLength: 1, maxLength: 4000, description: 'The message (Slack mrkdwn, Teams and Discord markdown).' },
      webhook_url: { type: 'string', format: 'uri', maxLength: 2048, writeOnly: true, description: 'The incoming webhook URL (webhook providers), given inline.' },
      webhook_secret: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$', maxLength: 64, description: 'Name of an account secret holding the webhook URL (webhook providers).' },
      channel: { type: 'string', maxLength: 80, description: 'Channel id or name (slack_api; required there).' },
      thread_ts: { type: 'string', pattern: '^\\d{10}\\.\\d{6}$', maxLength: 17, description: 'Reply in this thread (slack_api).' },
      blocks: {
        type: 'array',
        maxItems: 50,
        items: { type: 'object', maxProperties: 20 },
        description: 'Slack Block Kit blocks (Slack providers); `text` stays the notification fallback.',
      },
      username: { type: 'string', maxLength: 80, description: 'Display name to post as (Slack webhook and Discord, where the app allows it).' },
      timeout_ms: { type: 'integer', minimum: 100, maximum: 30_000, default: 10_000, description: 'How long the delivery may take.' },
      headers: requestHeadersInput('Extra request headers (webhook providers); never logged.'),
    },
    required: ['text'],
  },
  output: {
    type: 'object',
    properties: {
      delivered: { type: 'boolean', description: 'True when the service accepted the message.' },
      provider: { type: 'string', enum: ['slack_webhook', 'slack_api', 'teams_webhook', 'discord_webhook'], description: 'Where it went.' },
      channel: { type: ['string', 'null'], description: 'The channel the Slack Web API posted to; null for webhooks.' },
      ts: { type: ['string', 'null'], description: "The message's Slack timestamp (its id, for threads and edits); null for webhooks." },
      duration_ms: { type: 'number', description: 'Wall time of the delivery.' },
    },
    required: ['delivered', 'provider', 'channel', 'ts', 'duration_ms'],
  },
  config: {
    SLACK_API_URL: { type: 'url', default: 'https://slack.com/api/', description: 'Base URL of the Slack Web API.' },
    SLACK_BOT_TOKEN: { type: 'string', secret: true, description: "Bot token (xoxb-…) for slack_api; an account's own secret of that name wins." },
  },
  examples: [
    {
      name: 'A Slack incoming webhook',
      input: { provider: 'slack_webhook', text: ':rocket: api 1.4.2 deployed', webhook_url: 'https://hooks.example.test:8443/services/T000/B000/XXXX' },
      output: { delivered: true, provider: 'slack_webhook', channel: null, ts: null, duration_ms: 12 },
      varies: ['duration_ms'],
    },
    {
      name: 'A threaded reply through the Slack Web API',
      input: { provider: 'slack_api', channel: 'C0DEPLOYS', text: 'rollback done', thread_ts: '1700000000.000100' },
      output: { delivered: true, provider: 'slack_api', channel: 'C0DEPLOYS', ts: '1700000001.000200', duration_ms: 20 },
      varies: ['duration_ms'],
    },
  ],
});

@Tool(definition)
export class ChatNotifyTool implements ToolHandler<typeof definition> {
  async execute(input: ChatNotifyInput, ctx: ToolContext<typeof definition>): Promise<ChatNotifyOutput> {
    const started = performance.now();
    const done = (fields: Pick<ChatNotifyOutput, 'channel' | 'ts'>): ChatNotifyOutput => ({
      delivered: true,
      provider: input.provider,
      ...fields,
      duration_ms: Math.round(performance.now() - started),
    });
    if (input.provider === 'slack_api') return done(await postMessage(input, ctx));
    const url = await webhookUrl(input, ctx);
    if (input.provider === 'slack_webhook') await sendSlackWebhook(url, input, ctx);
    else await postWebhook(url, input, ctx);
    return done({ channel: null, ts: null });
  }
}

async function webhookUrl(input: ChatNotifyInput, ctx: ToolContext): Promise<string> {
  if (input.webhook_url !== undefined && input.webhook_secret !== undefined) throw ToolError.invalidInput('webhook_secret', "only one of 'webhook_url' or 'webhook_secret'");
  const url = input.webhook_url ?? (input.webhook_secret !== undefined ? await ctx.secrets.get(input.webhook_secret) : undefined);
  if (url === undefined) throw ToolError.invalidInput('webhook_url', `a webhook URL (or 'webhook_secret' naming an account secret holding one) for ${input.provider}`);
  const parameter = input.webhook_url !== undefined ? 'webhook_url' : 'webhook_secret';
  if (!/^https?:\/\//.test(url)) throw ToolError.invalidInput(parameter, 'an http(s) URL');
  // The address check before the client opens its socket: its agent checks again at connect time.
  await ctx.net.resolve(new URL(url).hostname, { parameter });
  return url;
}

/** @slack/webhook, its connections through the egress policy's agents; bounded by timeout_ms and the call's signal. */
async function sendSlackWebhook(url: string, input: ChatNotifyInput, ctx: ToolContext): Promise<void> {
  const agent = url.startsWith('https:') ? ctx.http.agents.https : ctx.http.agents.http;
  // The Slack clients load on the first message of their kind, not with the catalogue.
  const { IncomingWebhook } = await import('@slack/webhook');
  const webhook = new IncomingWebhook(url, { agent, timeout: input.timeout_ms, ...(input.username && { username: input.username }) });
  try {
    await untilAborted(webhook.send({ text: input.text, ...(input.blocks && { blocks: input.blocks as never }) }), ctx.signal);
  } catch (err) {
    throw slackFailure('slack webhook', err, ctx.signal, input.webhook_url !== undefined ? 'webhook_url' : 'webhook_secret');
  }
}

/** chat.postMessage with @slack/web-api: the account's SLACK_BOT_TOKEN, else the operator's. */
async function postMessage(input: ChatNotifyInput, ctx: ToolContext): Promise<Pick<ChatNotifyOutput, 'channel' | 'ts'>> {
  if (!input.channel) throw ToolError.invalidInput('channel', 'a channel id or name for slack_api');
  const apiUrl = String(ctx.config.SLACK_API_URL);
  await ctx.net.resolve(new URL(apiUrl).hostname, { parameter: 'SLACK_API_URL' });
  const { WebClient } = await import('@slack/web-api');
  const client = new WebClient(await ctx.secrets.get('SLACK_BOT_TOKEN'), {
    slackApiUrl: apiUrl,
    agent: apiUrl.startsWith('https:') ? ctx.http.agents.https : ctx.http.agents.http,
    timeout: input.timeout_ms,
    // This tool reports a rate limit with its Retry-After instead of waiting inside the call.
    rejectRateLimitedCalls: true,
    retryConfig: { retries: 0 },
  });
  try {
    const result = (await untilAborted(
      client.chat.postMessage({ channel: input.channel, text: input.text, ...(input.thread_ts && { thread_ts: input.thread_ts }), ...(input.blocks && { blocks: input.blocks as never }) }),
      ctx.signal,
    )) as WebAPICallResult & { channel?: string; ts?: string };
    return { channel: result.channel ?? input.channel, ts: result.ts ?? null };
  } catch (err) {
    throw slackFailure('slack', err, ctx.signal, 'SLACK_API_URL');
  }
}

/** Teams and Discord incoming webhooks: a JSON POST through ctx.http. */
async function postWebhook(url: string, input: ChatNotifyInput, ctx: ToolContext): Promise<void> {
  const parameter = input.webhook_url !== undefined ? 'webhook_url' : 'webhook_secret';
  const json = input.provider === 'discord_webhook' ? { content: input.text, ...(input.username && { username: input.username }) } : { text: input.text };
  const response = await ctx.http.request(url, { method: 'POST', json, headers: input.headers, timeoutMs: input.timeout_ms, maxResponseBytes: MAX_RESPONSE_BYTES, redirect: 'manual', parameter });
  if (response.status < 200 || response.status >= 300) throw ToolError.fromResponse(input.provider === 'discord_webhook' ? 'discord' : 'teams', response);
}

/** The client's promise, or the call's abort reason as soon as it is cancelled (the request is bounded by timeout_ms). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** A Slack client error as the ToolError a caller can act on; a refused address stays INVALID_INPUT. */
function slackFailure(service: string, err: unknown, signal: AbortSignal, parameter: string): unknown {
  if (signal.aborted || err instanceof ToolError) return signal.aborted ? signal.reason : err;
  const failure = err as { code?: string; data?: { error?: string }; original?: { response?: { status?: number; headers?: Record<string, string>; data?: unknown }; code?: string }; retryAfter?: number };
  if (failure.code === 'slack_webapi_rate_limited_error') {
    return new ToolError(`${service} rate-limited the call`, { retryable: true, retryAfter: failure.retryAfter, details: { upstream: { service, status: 429 } } });
  }
  if (failure.code === 'slack_webapi_platform_error') {
    const slackError = failure.data?.error ?? 'unknown_error';
    const caller = ['channel_not_found', 'not_in_channel', 'is_archived', 'invalid_blocks', 'msg_too_long', 'no_text', 'invalid_thread_ts'].includes(slackError);
    return new ToolError(`${service} refused the message: ${slackError}`, {
      code: caller ? 'INVALID_INPUT' : 'TOOL_ERROR',
      details: { upstream: { service, status: 200, error: slackError }, ...(caller && { parameter: slackError.includes('thread') ? 'thread_ts' : slackError.includes('channel') ? 'channel' : 'text' }) },
      ...(slackError === 'invalid_auth' || slackError === 'not_authed' ? { suggestion: 'Set a valid bot token: PUT /v1/secrets/SLACK_BOT_TOKEN' } : {}),
    });
  }
  const response = failure.original?.response;
  if (response?.status) {
    return ToolError.fromResponse(service, { status: response.status, headers: lowerCase(response.headers ?? {}) }, `${service} answered HTTP ${response.status}${typeof response.data === 'string' ? `: ${response.data.slice(0, 200)}` : ''}`);
  }
  // No answer: a refused address (INVALID_INPUT naming the parameter), else a retryable network failure.
  return networkError(failure.original ?? err, service, parameter, signal);
}

function lowerCase(headers: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), String(value)]));
}
