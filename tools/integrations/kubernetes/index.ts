/**
 * The Kubernetes integration: the KUBECONFIG setting and a cluster client whose requests go
 * through the calling tool's ctx.http (the egress policy, the call's cancellation).
 */
export { connect, type Cluster, type KubernetesObject, type ObjectApi } from './kube-client';
export { KUBERNETES_SETTINGS } from './settings';
