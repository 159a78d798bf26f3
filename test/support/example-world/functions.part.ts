/** The function gateway of the function-invoke examples: functions.example.test:9101. */
import { startGatewayFake } from '../functions/gateway-fake';
import type { WorldPart } from './world';

export const part: WorldPart = {
  name: 'functions',
  async start(world) {
    const gateway = await startGatewayFake(world.address, 9101);
    return { env: { FUNCTIONS_GATEWAY_URL: 'http://functions.example.test:9101' }, stop: () => gateway.close() };
  },
};
