/**
 * An ingress controller for the real node, when the plane is given one: Traefik (built from its Go
 * module by testing/build-traefik.sh) beside the node, reading Ingresses, Services and
 * EndpointSlices from the API server and proxying to the pods on the node's bridge. It listens on
 * loopback only, at a port of its own; a request reaches an Ingress's backend by its Host header.
 * Update checks and usage reports are off, so it never calls off this machine.
 */
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runBuildScript } from '../build-script';
import { freePort } from '../free-port';
import { probe, startProcess, waitFor } from '../plane/process';

/**
 * The IngressClass Traefik serves. An Ingress naming no class is served too (Traefik's default);
 * a class of another name is served when its `spec.controller` is Traefik's.
 */
export const INGRESS_CLASS = { name: 'traefik', controller: 'traefik.io/ingress-controller' } as const;

export interface IngressController {
  /** Where Ingresses are served: `http://127.0.0.1:<port>` (send the Ingress's host as Host). */
  readonly url: string;
}

/** Traefik's binary, built from its Go module by testing/build-traefik.sh or found in its cache (minutes, cold). */
export function ingressControllerBinary(verbose: boolean): string {
  return runBuildScript('build-traefik.sh', verbose);
}

/** Traefik's static configuration: the web entry point and its ping on loopback, Ingresses from the API server. */
export function traefikConfig(ports: { readonly web: number; readonly ping: number }): string {
  return `# The real node's ingress controller (testing/node/ingress.ts).
global:
  checkNewVersion: false
  sendAnonymousUsage: false
entryPoints:
  web:
    address: "127.0.0.1:${String(ports.web)}"
  ping:
    address: "127.0.0.1:${String(ports.ping)}"
ping:
  entryPoint: ping
log:
  level: INFO
providers:
  kubernetesIngress: {}
`;
}

/** Starts Traefik for the node in `dir` (KUBECONFIG the plane's); resolves once it answers its ping. */
export async function startIngressController(
  traefik: string,
  dir: string,
  plane: { readonly adminKubeconfig: string; readonly procs: ChildProcess[]; readonly logs: string },
): Promise<IngressController> {
  execFileSync('kubectl', ['--kubeconfig', plane.adminKubeconfig, 'apply', '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'IngressClass',
      metadata: { name: INGRESS_CLASS.name },
      spec: { controller: INGRESS_CLASS.controller },
    }),
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  const ports = { web: await freePort(), ping: await freePort() };
  const config = path.join(dir, 'traefik.yaml');
  fs.writeFileSync(config, traefikConfig(ports));
  const log = path.join(plane.logs, 'traefik.log');
  const env = { ...process.env, KUBECONFIG: plane.adminKubeconfig };
  plane.procs.push(startProcess(traefik, [`--configFile=${config}`], log, env));
  const ping = `http://127.0.0.1:${String(ports.ping)}/ping`;
  await waitFor(
    'ingress controller (Traefik) answering',
    async () => (await probe(ping, Buffer.alloc(0))) === 200,
    plane.procs,
    60_000,
    plane.logs,
  );
  return { url: `http://127.0.0.1:${String(ports.web)}` };
}
