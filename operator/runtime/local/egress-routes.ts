/**
 * The routes of the local control plane's egress proxy (testing/egress-proxy.ts): a JSON file
 * mapping a Service's address (`<svc>.<ns>.svc:<port>`) to a server on this machine, read by the
 * proxy on every connection the API server asks for. A reconciler run out of cluster
 * (`--webhook-loopback`) adds its webhook Services there, so the API server reaches it through
 * the very Services the operator's manifests name: no CRD or webhook configuration is repointed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isJsonObject } from '../../../constructs/contract/json';
import { isLoopbackHost } from './loopback-host';

/** The routes file's name, in the proxy's directory. */
export const ROUTES_FILE = 'routes.json';

/**
 * The routes file of the control plane whose kubeconfig this is (the one given, or the first in
 * $KUBECONFIG), when it has one: the package's `cluster` (and the test harness) write the
 * kubeconfig beside the proxy's directory, `egress/`.
 */
export function egressRoutesBeside(kubeconfig: string | undefined): string | undefined {
  const given = kubeconfig ?? process.env.KUBECONFIG?.split(path.delimiter)[0];
  if (!given) return undefined;
  const file = path.join(path.dirname(given), 'egress', ROUTES_FILE);
  return fs.existsSync(file) ? file : undefined;
}

/** The routes file: Service address → loopback target (only string entries count). */
export function readRoutes(file: string): Record<string, string> {
  const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
  const entries = isJsonObject(parsed) ? Object.entries(parsed) : [];
  return Object.fromEntries(entries.filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** Sends the API server's calls to `service` (`<svc>.<ns>.svc:<port>`) to `target` on this machine from now on. */
export function addRoute(file: string, service: string, target: string): void {
  const host = target.slice(0, target.lastIndexOf(':')).replace(/^\[|\]$/g, '');
  if (!isLoopbackHost(host)) throw new Error(`an egress route leads to this machine only, not ${target}`);
  const next = `${file}.${String(process.pid)}.tmp`;
  fs.writeFileSync(next, `${JSON.stringify({ ...readRoutes(file), [service]: target })}\n`);
  // Whole or not at all: the proxy reads the file on every connection.
  fs.renameSync(next, file);
}
