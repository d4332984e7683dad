/**
 * Benchmark: `cdk8s-operator-kit plan` over N settled Memcacheds — the same version (no change)
 * and a new one adding a label to every Deployment — against `kubectl diff --server-side` of the
 * same new children, in the same run on the same control plane: time, peak RSS, requests.
 *
 *   N=1000 npm run bench:plan
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import type { CustomResourceObject } from '../constructs/contract';
import { customResourceType, memcachedKind } from '../constructs';
import { bundleReconciler } from '../command/image/bundle';
import { loadControllers } from '../command/render';
import { renderChildren } from '../operator/runtime/children/render';
import { memcachedVersionPatching } from '../test/support/controllers-module';
import { withBenchCluster } from './cluster';
import { type BenchContext, measureReconciler, rssBytes } from './measure';

const ROOT = path.resolve(__dirname, '..');
const N = Number(process.env.N ?? 100);

/** The new version: every Deployment's pods get the label team=a. */
const LABEL_PATCH = "JsonPatch.add('/spec/template/metadata/labels/team', 'a')";

/** Runs a command, timing it and sampling its RSS every 50 ms for the peak. */
async function timed(
  command: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ seconds: number; peakRssMiB: number; code: number | null; stdout: string }> {
  const started = Date.now();
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  let peak = 0;
  const sampler = setInterval(() => {
    try {
      peak = Math.max(peak, rssBytes(child.pid ?? 0));
    } catch {
      // exited between samples
    }
  }, 50);
  const code = await new Promise<number | null>((r) => {
    child.once('exit', (c) => {
      r(c);
    });
  });
  clearInterval(sampler);
  if (code !== 0 && code !== 1) throw new Error(`${command} ${args.join(' ')} exited ${code}: ${stderr}`);
  return { seconds: +((Date.now() - started) / 1000).toFixed(2), peakRssMiB: Math.round(peak / 1048576), code, stdout };
}

async function measurePlans(ctx: BenchContext, ns: string) {
  const env = { KUBECONFIG: ctx.admin };
  // The command as a package user runs it: JavaScript, not TypeScript compiled on the fly.
  fs.mkdirSync(path.join(ROOT, 'build', 'bench-plan'), { recursive: true });
  const bundled = path.join(ROOT, 'build', 'bench-plan', 'cli.js');
  await bundleReconciler({ entry: 'command/cli.ts', outfile: bundled, minify: false, cwd: ROOT });
  const cli = (...args: string[]) => timed(process.execPath, [bundled, ...args], env);
  const module = memcachedVersionPatching(LABEL_PATCH);
  const same = await cli('plan', '--kind', 'Memcached', '-n', ns, '-o', 'json');
  const changed = await cli('plan', '--kind', 'Memcached', '-n', ns, '-o', 'json', '--controllers', module);
  const plans = [same, changed].map((r) => JSON.parse(r.stdout) as { children: object; requests: object });
  // kubectl diff of exactly the children the new version renders for the live Memcacheds.
  const live = (await ctx.client.list<CustomResourceObject>(customResourceType(memcachedKind), ns)).items.map((m) => ({
    ...m,
    apiVersion: 'cache.example.com/v1',
    kind: 'Memcached',
  }));
  const manifest = path.join(ROOT, 'build', 'bench-plan', 'children.yaml');
  // The same module plan loaded: one definition of the new version.
  const [newVersion] = await loadControllers(module);
  if (!newVersion) throw new Error(`${module} exports no controller`);
  fs.writeFileSync(
    manifest,
    live
      .flatMap((m) => renderChildren(newVersion, m))
      .map((c) => stringify(c))
      .join('---\n'),
  );
  const kubectlDiff = await timed(
    'kubectl',
    ['diff', '--server-side', '--force-conflicts', '--field-manager=cdk8s-operator-kit', '-f', manifest],
    env,
  );
  return {
    planSameVersion: { seconds: same.seconds, peakRssMiB: same.peakRssMiB, exit: same.code, ...plans[0] },
    planLabelAdded: { seconds: changed.seconds, peakRssMiB: changed.peakRssMiB, exit: changed.code, ...plans[1] },
    kubectlDiff: {
      seconds: kubectlDiff.seconds,
      peakRssMiB: kubectlDiff.peakRssMiB,
      exit: kubectlDiff.code,
      changedObjects: (kubectlDiff.stdout.match(/^\+\+\+ /gm) ?? []).length,
    },
    planVsKubectlDiff: +(changed.seconds / kubectlDiff.seconds).toFixed(2),
  };
}

async function main(): Promise<void> {
  await withBenchCluster(async (ctx, cluster) => {
    let result: Awaited<ReturnType<typeof measurePlans>> | undefined;
    await measureReconciler(ctx, N, {
      idleSeconds: 0,
      afterSettled: async (ns) => {
        result = await measurePlans(ctx, ns);
      },
    });
    console.log(JSON.stringify({ kubernetes: cluster.version, n: N, ...result }, null, 2));
  });
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
