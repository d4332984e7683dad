/** `cdk8s-operator-kit helm`: the operator's Helm chart. */
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { chartNameOf, writeHelmChart } from '../../constructs/helm/chart';
import { loadControllers } from '../render';
import { type Verb, UsageError } from './verb';

export const helmVerb: Verb = {
  help: `  helm --controllers <module> --name <operator> [--image <repository[:tag]>] [--version <v>] [--output <dir>]
      Write the Helm chart of the operator that runs these controllers (the module exports them),
      templated from its Operator construct, to <dir> (default build/helm/<chart name>): the
      CRDs (templates, following the release namespace; kept by helm uninstall; crds.install=false
      leaves them to you), RBAC, the reconciler's Deployment, its webhook Service and certificate
      Secret when it has webhooks. The chart is named as the operator (<name>, with -operator
      added unless it ends so). --version is the chart's (default 0.1.0).
`,
  run: helmCommand,
};

async function helmCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      controllers: { type: 'string' },
      name: { type: 'string' },
      image: { type: 'string' },
      version: { type: 'string' },
      output: { type: 'string' },
    },
  });
  if (!values.controllers) throw new UsageError('helm: --controllers <module> is required');
  if (!values.name) throw new UsageError('helm: --name <operator> is required (the name your Operator construct has)');
  const controllers = await loadControllers(values.controllers);
  const operator = { name: values.name, controllers, ...(values.image ? { image: values.image } : {}) };
  const dir = values.output ?? path.join('build', 'helm', chartNameOf(values.name));
  writeHelmChart(dir, { operator, version: values.version });
  process.stdout.write(`${dir}\n`);
  return 0;
}
