/**
 * What tests and the plan bench need to try the package's command as a user does: a module of
 * controllers (a new operator version) written into the project, and the command itself run
 * against the test cluster.
 */
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { commandArgs } from './command';
import { testKubeconfig } from './kube';

const ROOT = path.resolve(__dirname, '..', '..');

/**
 * Writes a TypeScript module exporting controllers into the project's build directory (so that
 * it resolves cdk8s as a user's module in their project does) and returns its path.
 */
export function controllersModule(source: string): string {
  fs.mkdirSync(path.join(ROOT, 'build'), { recursive: true });
  const file = path.join(fs.mkdtempSync(path.join(ROOT, 'build', 'plan-')), 'controllers.ts');
  fs.writeFileSync(file, source);
  return file;
}

/** A new version of the Memcached controller whose Deployments get `patch`, a cdk8s `JsonPatch` expression. */
export function memcachedVersionPatching(patch: string): string {
  return controllersModule(`import { ApiObject, JsonPatch } from 'cdk8s';
import { memcachedController } from ${JSON.stringify(path.join(ROOT, 'constructs'))};
export const controllers = [{
  ...memcachedController,
  render: (scope: any, mc: any, context: any) => {
    memcachedController.render!(scope, mc, context);
    for (const o of scope.node.findAll()) if (o instanceof ApiObject && o.kind === 'Deployment') o.addJsonPatch(${patch});
  },
}];
`);
}

/** The package's command (`command/cli.ts`) with these arguments, against the test cluster. */
export function runCommand(args: readonly string[], env: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [...commandArgs(), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, KUBECONFIG: testKubeconfig(), ...env },
    timeout: 120_000,
  });
}
