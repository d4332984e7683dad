/** `cdk8s-operator-kit create`: a kind added to a project `init` made. */
import { parseArgs } from 'node:util';
import { createKind } from '../scaffold';
import { type Verb, UsageError } from './verb';

export const createVerb: Verb = {
  help: `  create kind <Kind> --group <group> [--version <v>]
      Add a kind to a project made by init: kinds/<kind>.ts, its tests, and its controller and
      sample in controllers.ts.
`,
  run: createCommand,
};

function createCommand(args: string[]): Promise<number> {
  const [what, ...rest] = args;
  if (what !== 'kind') throw new UsageError('create: only "create kind <Kind> --group <group>" is known');
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { group: { type: 'string' }, version: { type: 'string' } },
  });
  const [kind] = positionals;
  if (!kind || positionals.length > 1) throw new UsageError('create kind: give one kind, e.g. create kind WebSite');
  if (!values.group) throw new UsageError('create kind: --group <group> is required, e.g. --group sites.example.com');
  const files = createKind('.', { kind, group: values.group, version: values.version });
  process.stdout.write(`${files.map((f) => `  wrote ${f}`).join('\n')}\n`);
  return Promise.resolve(0);
}
