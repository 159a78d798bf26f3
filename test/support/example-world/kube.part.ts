/**
 * cluster-apply's part of the example world: the loopback Kubernetes API (test/support/kube) and
 * a kubeconfig for it in the world's directory.
 */
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { startKubeApiServer } from '../kube/kube-api-server';
import type { WorldPart } from './world';

export const part: WorldPart = {
  name: 'kube',
  async start(world) {
    const kube = await startKubeApiServer({ host: world.address });
    const kubeconfig = path.join(world.dir, 'kubeconfig');
    writeFileSync(kubeconfig, kube.kubeconfig());
    return { env: { KUBECONFIG: kubeconfig }, stop: () => kube.close() };
  },
};
