import { App } from 'cdk8s';
import { platform } from './app';

const app = new App({ outdir: 'dist' });
platform(app);
app.synth();
