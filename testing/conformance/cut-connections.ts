/**
 * The watch-cut check's ground: a reconciler that reaches the API server through a TCP proxy on
 * loopback, whose every connection the check resets at the moment it chooses — its watches and
 * requests broken for real, as a load balancer's restart or a network blip breaks them.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadKubeConfig } from '../../operator/runtime/client';
import { TcpProxy } from '../tcp-proxy';
import type { VersionReconciler } from '../upgrade/reconciler-process';

/** Where a check's reconciler goes through the proxy: its kubeconfig, the cut, and the proxy's end. */
export interface CutConnections {
  /** A copy of the plane's kubeconfig whose server is the proxy. */
  readonly kubeconfig: string;
  /** Resets every open connection through the proxy; how many there were. */
  readonly cut: () => number;
  readonly close: () => Promise<void>;
}

/**
 * A proxy to the API server of `kubeconfig` and a kubeconfig through it (named after the run's
 * `workDir`). The server's certificate must name 127.0.0.1, as the test kit's control planes' do.
 */
export async function cutConnections(kubeconfig: string, workDir: string): Promise<CutConnections> {
  const { server } = loadKubeConfig({ path: kubeconfig });
  const url = new URL(server);
  const proxy = await TcpProxy.start({ host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 443) });
  const text = fs.readFileSync(kubeconfig, 'utf8');
  if (!text.includes(server)) {
    await proxy.close();
    throw new Error(
      `${kubeconfig} does not name its server as ${server}: the watch-cut check cannot point it at a proxy`,
    );
  }
  // Beside the plane's own, where a reconciler with --webhook-loopback finds the plane's Service
  // routes (operator/runtime/local/egress-routes.ts); named for the run, as runs share a plane.
  const file = path.join(path.dirname(kubeconfig), `${path.basename(workDir)}-through-proxy.kubeconfig`);
  fs.writeFileSync(file, text.replaceAll(server, `https://127.0.0.1:${proxy.port}`), { mode: 0o600 });
  return {
    kubeconfig: file,
    cut: () => {
      const open = proxy.connections;
      proxy.cutAll();
      return open;
    },
    close: async () => {
      await proxy.close();
      fs.rmSync(file, { force: true });
    },
  };
}

/**
 * The watch-cut check: `reconciler` stopped, one started behind the proxy (`start`) and settled
 * over the examples (`examples` of them), then `check` run with the cut; the proxy's reconciler
 * stopped after. The caller starts a reconciler as before for the checks that follow.
 */
export async function withCutConnections(options: {
  readonly reconciler: VersionReconciler;
  readonly kubeconfig: string;
  readonly workDir: string;
  readonly examples: number;
  readonly start: (kubeconfig: string) => Promise<VersionReconciler>;
  readonly check: (reconciler: VersionReconciler, cut: () => number) => Promise<string[]>;
}): Promise<string[]> {
  await options.reconciler.stop();
  const proxy = await cutConnections(options.kubeconfig, options.workDir);
  let behind: VersionReconciler | undefined;
  try {
    behind = await options.start(proxy.kubeconfig);
    await behind.settled(options.examples, 'the reconciler behind the proxy over the settled examples');
    return await options.check(behind, proxy.cut);
  } finally {
    await behind?.stop();
    await proxy.close();
  }
}
