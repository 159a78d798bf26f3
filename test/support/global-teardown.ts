/** Jest globalTeardown of the e2e project: stops every service globalSetup started, last first. */
import { runningServices } from './global-setup';

export default async function globalTeardown(): Promise<void> {
  const failures: string[] = [];
  for (const service of runningServices().splice(0).reverse()) {
    await service.stop().catch((error: unknown) => failures.push(`${service.name}: ${String(error)}`));
  }
  if (failures.length > 0) throw new Error(`Stopping test services failed:\n${failures.join('\n')}`);
}
