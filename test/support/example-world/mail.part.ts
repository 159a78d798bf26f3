/** The mail relay of the email-send example: mail.example.test:2525, plain SMTP. */
import { startSmtpFake } from '../smtp/smtp-fake';
import type { WorldPart } from './world';

export const part: WorldPart = {
  name: 'mail',
  async start(world) {
    const smtp = await startSmtpFake(world.address, 2525);
    return { env: { SMTP_URL: 'smtp://mail.example.test:2525', SMTP_FROM: 'releases@example.test' }, stop: () => smtp.close() };
  },
};
