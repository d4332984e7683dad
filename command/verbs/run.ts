/** `cdk8s-operator-kit run`: an entry point's reconciler run out of cluster. */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { bundleReconciler } from '../image/bundle';
import { forwardSignals } from '../forward-signals';
import { loadKubeConfig } from '../../operator/runtime/client';
import { isLoopbackServer, egressRoutesBeside } from '../../operator/runtime/local';
import { type Verb, UsageError } from './verb';

export const runVerb: Verb = {
  help: `  run --entry <file> [-- <reconciler flags>]
      Bundle the entry point and run it here, out of cluster, against $KUBECONFIG (or
      --kubeconfig after --): the reconciler of your own controllers, without an image. Against
      the local control plane (cluster above), its webhooks are served on 127.0.0.1 and the
      webhook Services the CRDs call routed there (--webhook-loopback; add
      --webhook-configuration=<name>-webhook for admission hooks); the CRDs are not repointed,
      so kubectl apply --server-side -f dist/ and the Helm chart apply them again as they are.
      Its health, metrics and webhook endpoints take free loopback ports (logged as "serving …")
      unless given.
`,
  run: runCommand,
};

async function runCommand(args: string[]): Promise<number> {
  // --entry is run's own; every other flag is the reconciler's (a `--` before them is optional,
  // so `npm run operator -- --namespace=dev` passes through).
  const split = args.indexOf('--');
  const own = split >= 0 ? args.slice(0, split) : args;
  const passed: string[] = [];
  const values: { entry?: string } = {};
  for (let i = 0; i < own.length; i++) {
    const arg = own[i] ?? '';
    if (arg === '--entry') values.entry = own[++i];
    else if (arg.startsWith('--entry=')) values.entry = arg.slice('--entry='.length);
    else passed.push(arg);
  }
  if (split >= 0) passed.push(...args.slice(split + 1));
  if (!values.entry) throw new UsageError('run: --entry <file> is required');
  const outfile = path.join('build', 'run', 'main.js');
  await bundleReconciler({ entry: values.entry, outfile, minify: false });
  const reconcilerArgs = [
    ...passed,
    ...localEndpoints(passed),
    ...(wantsLoopbackWebhooks(passed) ? ['--webhook-loopback'] : []),
  ];
  // In a process group of its own: a terminal's Ctrl-C reaches the whole foreground group, and
  // the reconciler, signalled both by it and by the forward below, took the second signal as
  // "exit now" (exit 1, no graceful shutdown). It gets the signal once, from here.
  const child = spawn(process.execPath, ['--enable-source-maps', outfile, ...reconcilerArgs], {
    stdio: 'inherit',
    detached: true,
  });
  // The reconciler stops gracefully on the signal this command gets.
  forwardSignals(child);
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

/**
 * Out of cluster, the health and metrics endpoints listen on loopback ports the kernel picks
 * (the reconciler logs them), unless the flags name one: the in-cluster defaults (:8080, :8081)
 * are ports that anything else on a developer's machine — a second reconciler, a test run beside
 * `npm run operator` — may already hold.
 */
export function localEndpoints(reconcilerArgs: readonly string[]): string[] {
  const given = (flag: string) => reconcilerArgs.some((a) => a === flag || a.startsWith(`${flag}=`));
  return ['--health-probe-bind-address', '--metrics-bind-address']
    .filter((f) => !given(f))
    .map((f) => `${f}=127.0.0.1:0`);
}

/**
 * Whether the reconciler should serve its webhooks on loopback, routed from their Services: against
 * the package's local control plane (its egress routes beside the kubeconfig), unless the flags
 * choose a certificate.
 */
function wantsLoopbackWebhooks(reconcilerArgs: readonly string[]): boolean {
  if (reconcilerArgs.some((a) => /^--webhook-(loopback|cert-path|cert-secret)\b/.test(a))) return false;
  const { values } = parseArgs({
    args: [...reconcilerArgs],
    options: { kubeconfig: { type: 'string' } },
    strict: false,
    allowPositionals: true,
  });
  const given = typeof values.kubeconfig === 'string' ? values.kubeconfig : undefined;
  try {
    return isLoopbackServer(loadKubeConfig({ path: given }).server) && egressRoutesBeside(given) !== undefined;
  } catch {
    // The reconciler says what is wrong with the kubeconfig, in one line.
    return false;
  }
}
