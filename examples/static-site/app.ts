/** The StaticSite operator as a cdk8s app: CRD, RBAC, Deployment, and a sample site. */
import { App, Chart } from 'cdk8s';
import { ConstructOperator } from '../../constructs';
import { staticSiteController } from './static-site';

export function staticSiteApp(outdir = 'dist/static-site'): App {
  const app = new App({ outdir });
  const operator = new ConstructOperator(app, 'static-site', {
    controller: staticSiteController,
    image: 'registry.example.com/static-site-operator',
    imageTag: '0.1.0',
  });
  const samples = new Chart(app, 'samples');
  operator.addSample(samples, 'hello', { pages: { 'index.html': '<h1>Hello</h1>' }, host: 'hello.example.com' });
  return app;
}

if (require.main === module) staticSiteApp().synth();
