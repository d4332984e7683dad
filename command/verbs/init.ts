/** `cdk8s-operator-kit init`: a new operator project, offline. */
import { parseArgs } from 'node:util';
import { initProject } from '../scaffold';
import { type Verb, UsageError } from './verb';

export const initVerb: Verb = {
  help: `  init [--name <package>] [--kind <Kind>] [--group <group>] [--version <v>] [--kit <spec>] [--image <repository>]
       [--namespaces <a,b>]
      Make a new operator project in this (empty) directory, offline: package.json, tsconfig,
      cdk8s.yaml, the operator's charts (app.ts, main.ts), its reconciler entry point
      (reconciler.ts), a kind with its construct and controller (kinds/), a unit test and an
      integration test against a real API server (test/), README. The kind defaults to the
      directory's name (website-operator: Website), its group to <kind>.example.com, its version
      to v1alpha1. --namespaces: the namespaces the operator serves (watchNamespaces: a Role in
      each, no rights elsewhere); without it, every namespace. Then: npm install && npm test.
`,
  run: initCommand,
};

function initCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      kind: { type: 'string' },
      group: { type: 'string' },
      version: { type: 'string' },
      kit: { type: 'string' },
      image: { type: 'string' },
      namespaces: { type: 'string' },
    },
  });
  if (positionals.length > 1) throw new UsageError('init: give at most one directory');
  const dir = positionals[0] ?? '.';
  const { namespaces, kit, ...names } = values;
  const watchNamespaces = namespaces?.split(',').map((n) => n.trim());
  const files = initProject(dir, { ...names, kitSpec: kit, watchNamespaces });
  process.stdout.write(
    [
      ...files.map((f) => `  wrote ${f}`),
      '',
      `Next${dir === '.' ? '' : `: cd ${dir} &&`} npm install && npm test; then npm run cluster and npm run operator (README.md).`,
      '',
    ].join('\n'),
  );
  return Promise.resolve(0);
}
