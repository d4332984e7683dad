/** The BlogSite operator as a cdk8s app: CRD, RBAC, Deployment, and a sample site. */
import { App, Chart } from 'cdk8s';
import { ConstructOperator } from '../../constructs';
import { blogSiteController } from './blog-site';

export function blogSiteApp(outdir = 'dist/blog-site'): App {
  const app = new App({ outdir });
  const operator = new ConstructOperator(app, 'blog-site', {
    controller: blogSiteController,
    image: 'registry.example.com/blog-site-operator',
    imageTag: '0.1.0',
  });
  const samples = new Chart(app, 'samples');
  operator.addSample(samples, 'hello', { posts: { 'index.html': '<h1>Hello</h1>' } });
  return app;
}

if (require.main === module) blogSiteApp().synth();
