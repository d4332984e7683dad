/**
 * `npm run helm`: a Helm chart of each of the kit's operators, in build/helm/<name>-operator/,
 * templated from the same Operator constructs `npm run synth` writes to dist/.
 *   npm run helm [-- --output <dir>] [--version <chart version>]
 */
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import {
  applicationController,
  cronTabController,
  databaseController,
  etcdClusterController,
  memcachedController,
  webAppController,
  writeHelmChart,
  type ControllerDeclaration,
} from '../constructs';

const OPERATORS: Record<string, readonly ControllerDeclaration[]> = {
  memcached: [memcachedController],
  etcd: [etcdClusterController],
  crontab: [cronTabController],
  webapp: [applicationController, webAppController],
  database: [databaseController],
};

const { values } = parseArgs({
  options: {
    output: { type: 'string', default: path.join('build', 'helm') },
    version: { type: 'string' },
  },
});
for (const [name, controllers] of Object.entries(OPERATORS)) {
  const dir = path.join(values.output, `${name}-operator`);
  writeHelmChart(dir, { operator: { name, controllers }, version: values.version });
  console.log(dir);
}
