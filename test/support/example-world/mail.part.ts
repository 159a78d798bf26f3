/** The mail relay of the email-send example: mail.example.test:2525, STARTTLS with a leaf of the world's CA. */
import { startSmtpFake } from '../smtp/smtp-fake';
import type { WorldPart } from './world';

export const part: WorldPart = {
  name: 'mail',
  async start(world) {
    const smtp = await startSmtpFake(world.issueCertificate(['mail.example.test'], { days: 30 }), world.address, 2525);
    return { env: { SMTP_URL: 'smtp://mail.example.test:2525', SMTP_FROM: 'releases@example.test' }, stop: () => smtp.close() };
  },
};
