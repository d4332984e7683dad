import { App, Chart } from 'cdk8s';
import { ConstructOperator, DatabaseOperator, MemcachedOperator } from 'cdk8s-operator-kit';
import { greetingController } from './greeting';

/** The platform: the cluster-scoped objects first, then the operators, in the team's chart. */
export function platform(app: App) {
  const cluster = new Chart(app, 'cluster');
  const chart = new Chart(app, 'platform', { labels: { team: 'platform' } });
  new MemcachedOperator(chart, 'cache', { clusterScope: cluster, replicas: 2, leaderElection: true });
  new DatabaseOperator(chart, 'db', { clusterScope: cluster, namespace: 'databases', logLevel: 'debug' });
  const greetings = new ConstructOperator(chart, 'greeting', {
    clusterScope: cluster,
    controller: greetingController,
    image: 'registry.example.com/greeting-operator:1.0.0',
  });
  greetings.addSample(new Chart(app, 'samples'), 'hello', { message: 'Hello from a construct' });
  return { cluster, chart, greetings };
}
