import { runTool, toolFailure } from '@tos/sdk/testing';
import { CHAT_FAKE_TOKEN, startChatFake, type ChatFake } from '../../../test/support/chat/chat-fake';
import { ChatNotifyTool } from './chat-notify.tool';

describe('chat-notify', () => {
  let chat: ChatFake;
  const config = () => ({ SLACK_API_URL: `${chat.url}/api/`, SLACK_BOT_TOKEN: 'xoxb-operator-token' });
  beforeAll(async () => {
    chat = await startChatFake();
  });
  beforeEach(() => chat.requests.splice(0));
  afterAll(() => chat.close());

  describe('Slack incoming webhook', () => {
    it('posts text and blocks, from an inline URL or an account secret holding it', async () => {
      const blocks = [{ type: 'section', text: { type: 'mrkdwn', text: '*deployed*' } }];
      await expect(runTool(ChatNotifyTool, { text: 'deployed', blocks, webhook_url: `${chat.url}/services/T1/B1/X1` })).resolves.toMatchObject({ delivered: true, provider: 'slack_webhook', channel: null, ts: null });
      expect(chat.requests[0]).toMatchObject({ path: '/services/T1/B1/X1', body: { text: 'deployed', blocks } });
      await runTool(ChatNotifyTool, { text: 'from a secret', webhook_secret: 'DEPLOY_CHANNEL_HOOK' }, { secrets: { DEPLOY_CHANNEL_HOOK: `${chat.url}/services/T1/B1/X2` } });
      expect(chat.requests[1]).toMatchObject({ path: '/services/T1/B1/X2', body: { text: 'from a secret' } });
    });

    it('reports a removed webhook as not retryable and a 500 as retryable', async () => {
      expect(await toolFailure(runTool(ChatNotifyTool, { text: 'x', webhook_url: `${chat.url}/services/T1/B1/GONE` }))).toMatchObject({
        code: 'TOOL_ERROR',
        retryable: false,
        details: { upstream: { service: 'slack webhook', status: 404 } },
        message: expect.stringContaining('no_service'),
      });
      expect(await toolFailure(runTool(ChatNotifyTool, { text: 'x', webhook_url: `${chat.url}/services/T1/B1/FAIL` }))).toMatchObject({ retryable: true, details: { upstream: { status: 500 } } });
      expect(await toolFailure(runTool(ChatNotifyTool, { text: 'x', webhook_url: `${chat.url}/services/T1/B1/LIMIT` }))).toMatchObject({ retryable: true, retryAfter: 2 });
    });

    it('is a retryable error when nothing answers', async () => {
      expect(await toolFailure(runTool(ChatNotifyTool, { text: 'x', webhook_url: 'http://127.0.0.1:1/services/T/B/X' }))).toMatchObject({ code: 'TOOL_ERROR', retryable: true });
    });
  });

  describe('Slack Web API', () => {
    it("posts with the account's own bot token, else the operator's, threads included", async () => {
      await expect(runTool(ChatNotifyTool, { provider: 'slack_api', channel: 'C0DEPLOYS', text: 'rollback done', thread_ts: '1700000000.000100' }, { config: config(), secrets: { SLACK_BOT_TOKEN: CHAT_FAKE_TOKEN } })).resolves.toMatchObject({
        delivered: true,
        channel: 'C0DEPLOYS',
        ts: '1700000001.000200',
      });
      expect(chat.requests[0]).toMatchObject({ path: '/api/chat.postMessage', authorization: `Bearer ${CHAT_FAKE_TOKEN}`, body: { channel: 'C0DEPLOYS', text: 'rollback done', thread_ts: '1700000000.000100' } });
      // The operator's token is wrong for this fake: Slack's invalid_auth, with how to set one's own.
      expect(await toolFailure(runTool(ChatNotifyTool, { provider: 'slack_api', channel: 'C0DEPLOYS', text: 'x' }, { config: config() }))).toMatchObject({
        code: 'TOOL_ERROR',
        retryable: false,
        details: { upstream: { error: 'invalid_auth' } },
        suggestion: expect.stringContaining('SLACK_BOT_TOKEN'),
      });
    });

    it("maps Slack's errors: a missing channel is the caller's, a rate limit passes Retry-After on, a 500 is retryable", async () => {
      const call = (channel: string) => runTool(ChatNotifyTool, { provider: 'slack_api', channel, text: 'x' }, { config: config(), secrets: { SLACK_BOT_TOKEN: CHAT_FAKE_TOKEN } });
      expect(await toolFailure(call('C404'))).toMatchObject({ code: 'INVALID_INPUT', details: { parameter: 'channel', upstream: { error: 'channel_not_found' } } });
      expect(await toolFailure(call('CRATELIMIT'))).toMatchObject({ code: 'TOOL_ERROR', retryable: true, retryAfter: 3 });
      expect(await toolFailure(call('CFAIL'))).toMatchObject({ code: 'TOOL_ERROR', retryable: true });
    });
  });

  describe('Teams and Discord webhooks', () => {
    it('post in each service shape', async () => {
      await runTool(ChatNotifyTool, { provider: 'teams_webhook', text: 'build red', webhook_url: `${chat.url}/teams/abc` });
      await runTool(ChatNotifyTool, { provider: 'discord_webhook', text: 'build green', username: 'ci', webhook_url: `${chat.url}/discord/123/tok` });
      expect(chat.requests.map(({ path, body }) => [path, body])).toEqual([
        ['/teams/abc', { text: 'build red' }],
        ['/discord/123/tok', { content: 'build green', username: 'ci' }],
      ]);
    });
  });

  describe('bad input', () => {
    it.each([
      [{ text: '' }, 'text'],
      [{ text: 'x' }, 'webhook_url'],
      [{ text: 'x', webhook_url: 'http://127.0.0.1/a', webhook_secret: 'A' }, 'webhook_secret'],
      [{ provider: 'slack_api', text: 'x' }, 'channel'],
      [{ provider: 'slack_api', channel: 'C1', text: 'x', thread_ts: 'yesterday' }, 'thread_ts'],
      [{ provider: 'sms', text: 'x' }, 'provider'],
    ])('%j is refused naming %s', async (input, parameter) => {
      expect(await toolFailure(runTool(ChatNotifyTool, input, { config: config() }))).toMatchObject({ details: { parameter } });
    });
  });

  describe('egress policy', () => {
    it.each(['slack_webhook', 'teams_webhook'])('%s refuses a loopback webhook by default, naming the parameter', async (provider) => {
      expect(await toolFailure(runTool(ChatNotifyTool, { provider, text: 'x', webhook_url: `${chat.url}/services/T/B/X` }, { egressAllow: '' }))).toMatchObject({
        code: 'INVALID_INPUT',
        details: { parameter: 'webhook_url', expected: 'a public address' },
      });
      expect(chat.requests).toEqual([]);
    });

    it('refuses a Web API at a refused address', async () => {
      expect(await toolFailure(runTool(ChatNotifyTool, { provider: 'slack_api', channel: 'C1', text: 'x' }, { config: config(), egressAllow: '' }))).toMatchObject({
        code: 'INVALID_INPUT',
        details: { parameter: 'SLACK_API_URL' },
      });
    });
  });

  it('stops when cancelled mid-call', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('cancelled')), 200);
    const started = Date.now();
    await expect(runTool(ChatNotifyTool, { text: 'x', webhook_url: `${chat.url}/hang`, timeout_ms: 30_000 }, { signal: controller.signal })).rejects.toThrow('cancelled');
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
