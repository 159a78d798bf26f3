/** Starting and stopping the HTTP servers tests run on loopback. */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on `address:port` (0: a free port); resolves with its `http://address:port`. */
export async function listenHttp(server: Server, address = '127.0.0.1', port = 0): Promise<{ url: string; close(): Promise<void> }> {
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, address, resolve));
  return {
    url: `http://${address}:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
