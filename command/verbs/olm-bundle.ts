/** `cdk8s-operator-kit olm-bundle`: operators as Operator Lifecycle Manager bundles. */
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { App, Chart } from 'cdk8s';
import {
  CronTabOperator,
  DatabaseOperator,
  EtcdClusterOperator,
  MemcachedOperator,
  type Operator,
  type OperatorProps,
  WebAppOperator,
} from '../../constructs';
import { writeOlmBundle } from '../../constructs/olm/bundle';
import { loadControllers, readResources } from '../render';
import { type Verb, UsageError } from './verb';

export const olmBundleVerb: Verb = {
  help: `  olm-bundle --out <dir> [--version <v>] [--channel <c>] [--controllers <module> --name <operator>] [--examples <resources.yaml>]...
      Write Operator Lifecycle Manager bundles, as operator-sdk's make bundle does, to
      <dir>/<operator>/: manifests/ (the ClusterServiceVersion made from the operator's construct:
      its Deployment, the rules of its ServiceAccount, its CRDs described from their schemas; the
      CRDs; the metrics Service), metadata/annotations.yaml and bundle.Dockerfile. Without
      --controllers, one bundle per ready-made operator of the kit; with it, the operator that runs
      the module's controllers, named --name. --examples: resources of its kinds, shown as the
      CSV's alm-examples. --version (default 0.1.0), --channel (default stable).
`,
  run: olmBundleCommand,
};

/** The kit's ready-made operators, by the name `kubectl apply -f dist/` installs them under. */
const KIT_OPERATORS: Readonly<Record<string, new (scope: Chart, id: string) => Operator>> = {
  memcached: MemcachedOperator,
  etcd: EtcdClusterOperator,
  crontab: CronTabOperator,
  webapp: WebAppOperator,
  database: DatabaseOperator,
};

/** A ready-made operator's props, as its construct makes them. */
export function kitOperatorProps(name: string): OperatorProps & { name: string } {
  const make = KIT_OPERATORS[name];
  if (!make) throw new UsageError(`olm-bundle: no ready-made operator ${JSON.stringify(name)}`);
  return { ...new make(new Chart(new App(), name), name).props, name };
}

/** The ready-made operators' names. */
export const KIT_OPERATOR_NAMES = Object.keys(KIT_OPERATORS);

async function olmBundleCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      out: { type: 'string' },
      version: { type: 'string' },
      channel: { type: 'string' },
      controllers: { type: 'string' },
      name: { type: 'string' },
      examples: { type: 'string', multiple: true },
    },
  });
  if (!values.out) throw new UsageError('olm-bundle: --out <dir> is required');
  if (values.controllers && !values.name)
    throw new UsageError('olm-bundle: --name <operator> is required with --controllers');
  const examples = (values.examples ?? []).flatMap((f) => readResources(f));
  const operators = values.controllers
    ? [{ name: values.name ?? '', controllers: await loadControllers(values.controllers) }]
    : KIT_OPERATOR_NAMES.map(kitOperatorProps);
  for (const operator of operators) {
    const kinds = new Set(operator.controllers.map((c) => `${c.for.group}/${c.for.kind}`));
    const own = examples.filter((e) => kinds.has(`${(e.apiVersion ?? '').split('/')[0] ?? ''}/${e.kind ?? ''}`));
    const dir = path.join(values.out, operator.name);
    writeOlmBundle(dir, { operator, version: values.version, channel: values.channel, examples: own });
    process.stdout.write(`${dir}\n`);
  }
  return 0;
}
