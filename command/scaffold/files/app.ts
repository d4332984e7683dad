import { type App, Chart } from 'cdk8s';
import { Operator } from 'cdk8s-operator-kit';
import { controllers, samples } from './controllers';

/** The operator: its cluster-scoped objects (CRDs, ClusterRoles) in a chart applied first, then the rest. */
export function operatorApp(app: App) {
  const cluster = new Chart(app, 'cluster');
  const chart = new Chart(app, 'operator');
  const operator = new Operator(chart, 'website-operator', {
    clusterScope: cluster,
    controllers,
    // Built by `npm run image`; push it where your cluster pulls from.
    image: 'registry.example.com/website-operator',
    imageTag: '0.1.0',
    // Every namespace. To serve only some (a Role in each, no rights elsewhere):
    // watchNamespaces: ['team-a', 'team-b'],
  });
  const sampleChart = new Chart(app, 'samples');
  for (const addSample of samples) addSample(sampleChart);
  return { cluster, chart, operator, samples: sampleChart };
}
