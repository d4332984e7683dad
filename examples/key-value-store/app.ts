/** The KeyValueStore operator as a cdk8s app: CRD, RBAC, Deployment, and a sample store. */
import { App, Chart } from 'cdk8s';
import { ConstructOperator } from '../../constructs';
import { keyValueStoreController } from './key-value-store';

export function keyValueStoreApp(outdir = 'dist/key-value-store'): App {
  const app = new App({ outdir });
  const operator = new ConstructOperator(app, 'key-value-store', {
    controller: keyValueStoreController,
    image: 'registry.example.com/key-value-store-operator',
    imageTag: '0.1.0',
  });
  const samples = new Chart(app, 'samples');
  operator.addSample(samples, 'sessions', { replicas: 1, seed: { greeting: 'hello' } });
  return app;
}

if (require.main === module) keyValueStoreApp().synth();
