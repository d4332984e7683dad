/**
 * `conformanceTest` over the shipped examples' kinds — StaticSite, BlogSite and KeyValueStore —
 * each example its app's own sample (the samples chart its app synthesizes), on a control plane of
 * the file's own. In the long tier: three more whole runs — each starts its reconciler four
 * times and a spare API server three times — have no room in `npm test`'s budget
 * (conformance.test.ts runs the kit's kinds). The platform-app example is a package of its own:
 * its Greeting's conformance test is its own, which consumer-package.test.ts runs against the
 * packed kit.
 */
import * as path from 'node:path';
import { type App, type Chart, Testing } from 'cdk8s';
import type { KubeObject } from '../../constructs/contract';
import {
  type ConformanceOptions,
  type ConformanceReport,
  type ControlPlane,
  conformanceTest,
  startControlPlane,
} from '../../testing';
import { blogSiteApp } from '../../examples/blog-site/app';
import { keyValueStoreApp } from '../../examples/key-value-store/app';
import { staticSiteApp } from '../../examples/static-site/app';
import { giveIngressesAddresses } from '../support/ingress-addresses';
import { nodesRun, testWithNodes } from '../support/kube';

jest.setTimeout(600_000);

const EXAMPLES = path.join(__dirname, '..', '..', 'examples');

/** The objects of an app's samples chart, as `kubectl apply -f dist/` would create them. */
function samplesOf(app: App): KubeObject[] {
  const chart = app.node.children.find((c) => c.node.id === 'samples') as Chart;
  return Testing.synth(chart) as KubeObject[];
}

/** The StaticSite run's namespace, whose Ingresses are given an address: its Ready waits on one. */
const SITES_NAMESPACE = `conformance-sites-${Math.random().toString(36).slice(2, 8)}`;

const EXAMPLE_KINDS: readonly {
  kind: string;
  module: string;
  app: (outdir: string) => App;
  /** What the run needs beyond its examples. */
  more?: Partial<ConformanceOptions>;
}[] = [
  {
    kind: 'StaticSite',
    module: 'static-site/static-site.ts',
    app: staticSiteApp,
    // Each copy a host of its own, as each site claims its host.
    more: {
      namespace: SITES_NAMESPACE,
      copy: (example, name) => ({
        ...example,
        metadata: { ...example.metadata, name },
        spec: { ...(example.spec as object), host: `${name}.example.com` },
      }),
    },
  },
  { kind: 'BlogSite', module: 'blog-site/blog-site.ts', app: blogSiteApp },
  { kind: 'KeyValueStore', module: 'key-value-store/key-value-store.ts', app: keyValueStoreApp },
];

let plane: Promise<ControlPlane> | undefined;
const runs = new Map<string, Promise<ConformanceReport>>();
const exampleCounts = new Map<string, number>();
let ingressAddresses: { stop(): void } | undefined;

beforeAll(() => {
  if (!nodesRun) return;
  const started = (plane = startControlPlane({ audit: true, own: true, verbose: false }));
  void started.then((p) => (ingressAddresses = giveIngressesAddresses(p.kubeconfig, SITES_NAMESPACE)));
  // Started together: the runs mostly wait (for rest, for the garbage collector).
  for (const { kind, module, app, more } of EXAMPLE_KINDS) {
    const examples = samplesOf(app('/dev/null')).filter((o) => o.kind === kind);
    exampleCounts.set(kind, examples.length);
    const controllers = path.join(EXAMPLES, module);
    runs.set(
      kind,
      started.then((controlPlane) => conformanceTest({ controlPlane, controllers, kind, examples, ...more })),
    );
  }
});

afterAll(async () => {
  await Promise.allSettled(runs.values());
  ingressAddresses?.stop();
  await (await plane)?.stop();
});

for (const { kind } of EXAMPLE_KINDS)
  testWithNodes(`the shipped example's ${kind}, its app's sample, passes the conformance checks`, async () => {
    expect(exampleCounts.get(kind)).toBeGreaterThan(0);
    const report = await runs.get(kind)!;
    expect({ kind, problems: report.problems }).toEqual({ kind, problems: [] });
  });
