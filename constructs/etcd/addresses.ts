/** Names and ports of etcd members: pure, for the render and the membership step alike. */
export const ETCD_CLIENT_PORT = 2379;
export const ETCD_PEER_PORT = 2380;
/** Health and metrics, plain HTTP: what the kubelet probes (no client certificate needed). */
export const ETCD_METRICS_PORT = 2381;

/** The name of member `ordinal`'s pod (and etcd member name). */
export function memberName(cluster: string, ordinal: number): string {
  return `${cluster}-${ordinal}`;
}

/** The ordinal of a member named like its pod, or undefined. */
export function ordinalOf(cluster: string, name: string): number | undefined {
  const m = /^(.*)-(\d+)$/.exec(name);
  return m?.[1] === cluster ? Number(m[2]) : undefined;
}

/** A member's stable DNS name through the headless peer Service. */
export function memberDnsName(cluster: string, namespace: string, ordinal: number): string {
  return `${memberName(cluster, ordinal)}.${cluster}.${namespace}.svc`;
}
