import { App } from 'cdk8s';
import { operatorApp } from './app';

// kubectl apply -f dist/ installs the operator: the CRDs and cluster-wide rights first
// (0000-cluster), then the reconciler, then the samples.
const app = new App({ outdir: 'dist' });
operatorApp(app);
app.synth();
