/** The chat services of the chat-notify examples: webhooks at hooks.example.test:8443/services/…, the Web API at chat.example.test:9100. */
import { CHAT_FAKE_TOKEN, startChatFake } from '../chat/chat-fake';
import type { WorldPart } from './world';

export const part: WorldPart = {
  name: 'chat',
  async start(world) {
    const chat = await startChatFake(world.address, 9100);
    return { env: { SLACK_API_URL: 'http://chat.example.test:9100/api/', SLACK_BOT_TOKEN: CHAT_FAKE_TOKEN }, stop: () => chat.close() };
  },
};
