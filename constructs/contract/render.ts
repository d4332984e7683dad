import { App, Chart } from 'cdk8s';
import { type Construct } from 'constructs';
import type { KubeObject } from './objects';

/**
 * Renders constructs to plain objects in a throwaway chart: how a reconciler turns the same
 * cdk8s constructs used at synth time into the live children it applies, and how a
 * ConstructOperator learns at synth time which kinds its construct makes.
 */
export function renderConstructs(build: (scope: Construct) => void): KubeObject[] {
  const app = new App({ outdir: '/dev/null' });
  const chart = new Chart(app, 'render');
  build(chart);
  return chart.toJson() as KubeObject[];
}
