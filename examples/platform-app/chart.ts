import { App } from 'cdk8s';
import { writeHelmChart } from 'cdk8s-operator-kit';
import { platform } from './app';

// The Greeting operator as a Helm chart, from the very construct main.ts synthesizes: its image
// and settings are the chart's defaults.
const { greetings } = platform(new App({ outdir: 'dist' }));
writeHelmChart('charts/greeting-operator', { operator: greetings, version: '1.0.0' });
