/**
 * The reconciler's flags are named once (constructs/contract/reconciler-flags.ts): what an
 * Operator construct writes into its Deployment, with every option that adds a flag, is what the
 * runtime parses, value for value.
 */
import { Testing } from 'cdk8s';
import { RECONCILER_FLAGS } from '../../../constructs/contract/reconciler-flags';
import { FLAG_OPTIONS, parseFlags } from '../../../operator/flags';
import { KIT_CONTROLLERS } from '../../../constructs';
import { KIT_OPERATORS } from '../../support/kit-operators';

const controllerNames = KIT_CONTROLLERS.map((c) => c.name);

test('the runtime declares a type and default for exactly the names the contract lists', () => {
  expect(Object.keys(FLAG_OPTIONS).sort()).toEqual([...RECONCILER_FLAGS].sort());
});

describe.each(KIT_OPERATORS)('the %s operator', (_name, make) => {
  test.each([
    ['by default', {}],
    [
      'scoped to several namespaces, sharded, traced',
      { watchNamespaces: ['a', 'b'], shards: 2, otlpEndpoint: 'http://otel:4318' },
    ],
    ['scoped to one namespace, one replica', { watchNamespace: 'a', replicas: 1 }],
  ] as const)('%s: every argument of its reconciler is one the runtime parses', (_what, options) => {
    const chart = Testing.chart();
    make(chart, 'op', options);
    const deployment = Testing.synth(chart).find((o) => o.kind === 'Deployment');
    const args: string[] = deployment.spec.template.spec.containers[0].args;
    expect(args.length).toBeGreaterThan(0);
    for (const arg of args) expect(RECONCILER_FLAGS).toContain(/^--([a-z-]+)/.exec(arg)?.[1]);
    const flags = parseFlags(args, controllerNames);
    expect(flags.controllers.length).toBeGreaterThan(0);
    if ('watchNamespaces' in options) expect(flags.namespaces).toEqual(['a', 'b']);
    if ('watchNamespace' in options) expect(flags.namespaces).toEqual(['a']);
    if ('shards' in options) expect(flags.shards).toBe(2);
  });
});
