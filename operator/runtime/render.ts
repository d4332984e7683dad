import { App, Chart } from 'cdk8s';
import { Construct } from 'constructs';
import { KubeObject } from './resource';

/**
 * Renders constructs to plain objects in a throwaway chart: how a reconciler turns the same
 * cdk8s constructs used at synth time into the live children it applies.
 */
export function renderConstructs(build: (scope: Construct) => void): KubeObject[] {
  const app = new App({ outdir: '/dev/null' });
  const chart = new Chart(app, 'render');
  build(chart);
  return chart.toJson() as KubeObject[];
}
