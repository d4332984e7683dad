/**
 * The reconciler's command-line flags, named once for both halves: the runtime parses them
 * (operator/flags.ts declares each one's type and default, keyed by these names and checked by
 * the compiler) and the Operator construct writes them into the Deployment it makes
 * (`reconcilerFlag`), so a flag renamed on one side cannot be missed on the other.
 */
export const RECONCILER_FLAGS = [
  'controllers',
  'namespace',
  'namespaces',
  'leader-elect',
  'shards',
  'leader-election-id',
  'leader-election-namespace',
  'leader-election-lease-duration',
  'leader-election-renew-deadline',
  'leader-election-retry-period',
  'warm-standby',
  'metrics-bind-address',
  'metrics-secure',
  'metrics-cert-path',
  'health-probe-bind-address',
  'webhook-bind-address',
  'webhook-cert-path',
  'webhook-cert-secret',
  'webhook-cert-hosts',
  'webhook-configuration',
  'webhook-loopback',
  'max-concurrent-reconciles',
  'priority-queue',
  'sync-period',
  'watch-stall-timeout',
  'kube-api-qps',
  'kube-api-burst',
  'otlp-endpoint',
  'kubeconfig',
  'log-level',
  'log-format',
  'help',
] as const;

export type ReconcilerFlag = (typeof RECONCILER_FLAGS)[number];

/** `--<name>=<value>` as the reconciler parses it; `--<name>` alone for a switch. */
export function reconcilerFlag(name: ReconcilerFlag, value?: string | number): string {
  return value === undefined ? `--${name}` : `--${name}=${String(value)}`;
}
