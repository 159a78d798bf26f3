import type { ToolSettingDefinition } from '@tos/sdk';

/** The cluster a Kubernetes tool talks to. */
export const KUBERNETES_SETTINGS = {
  KUBECONFIG: { type: 'string', description: 'Path of the kubeconfig whose current context is the cluster to apply to; without it, the pod service account (in-cluster configuration).' },
} satisfies Record<string, ToolSettingDefinition>;
