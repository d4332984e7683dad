import * as fs from 'node:fs';
import { ETCD_CLIENT_PORT, ETCD_PEER_PORT, memberDnsName } from './addresses';
import { parseJson, stringAt } from '../contract/json';
import { type EtcdTransport, scheme } from './tls';

/**
 * Set to a JSON file of `{ "<pod>.<cluster>.<namespace>.svc": "<host>" }` to reach members at
 * other addresses than their cluster DNS names: an operator run outside the cluster (through
 * port-forwards), or the tests, whose etcd members listen on loopback addresses. Read on every
 * use, so it may be written while the operator runs.
 */
export const ETCD_HOSTS_FILE_ENV = 'OPKIT_ETCD_HOSTS_FILE';

function memberHost(cluster: string, namespace: string, ordinal: number): string {
  const dns = memberDnsName(cluster, namespace, ordinal);
  const file = process.env[ETCD_HOSTS_FILE_ENV];
  if (!file) return dns;
  let hosts: unknown;
  try {
    hosts = parseJson(fs.readFileSync(file, 'utf8'));
  } catch {
    // No file yet: the DNS name.
  }
  return stringAt(hosts, dns) ?? dns;
}

/** The URL other members reach member `ordinal` at (its `--initial-advertise-peer-urls`). */
export function peerURL(cluster: string, namespace: string, ordinal: number, transport: EtcdTransport): string {
  return `${scheme(transport)}://${memberHost(cluster, namespace, ordinal)}:${ETCD_PEER_PORT}`;
}

/** The URL the operator calls member `ordinal`'s API at. */
export function clientURL(cluster: string, namespace: string, ordinal: number, transport: EtcdTransport): string {
  return `${scheme(transport)}://${memberHost(cluster, namespace, ordinal)}:${ETCD_CLIENT_PORT}`;
}

/**
 * The addresses the hosts file maps members to (none without one): a member's certificate names
 * them too, as the operator and the other members reach it there.
 */
export function mappedMemberHosts(cluster: string, namespace: string, members: number): string[] {
  const mapped = Array.from({ length: members }, (_, i) => memberHost(cluster, namespace, i));
  return mapped.filter((host, i) => host !== memberDnsName(cluster, namespace, i));
}
