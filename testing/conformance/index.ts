/**
 * A conformance run: a kind's controller proven a good operator on a real API server, whatever
 * its `render`, `status` or `external` do — the mistakes the runtime cannot guard against for it.
 * Its examples are created in a namespace of the run's own under a reconciler of the module's
 * controllers (as `upgradeTest` runs one), then each named check reports what the kind did:
 *
 * - `ready`: every example reaches Ready at its generation, with conditions kstatus reads;
 * - `settled`: a reconcile of a settled resource (its metadata touched) writes nothing;
 * - `restart`: a reconciler started again over settled resources writes nothing;
 * - `watch-cut`: under a reconciler whose every connection to the API server is cut (a proxy
 *   between them) as a copy of the first example is created, and again as it is deleted, the copy
 *   becomes Ready and then goes with all it controlled: no update lost to a broken watch;
 * - `apiserver-restart`: under the same reconciler, whose API server is a spare of the run's own
 *   (another kube-apiserver on the plane's etcd), restarted as a copy of the first example is created and again as
 *   it is deleted, the copy becomes Ready and then goes with all it controlled: no update lost to
 *   a restart, a watch the restarted server refuses to resume (410 Gone) listed again;
 * - `never-adopts`: an object of someone else's holding the name of one of a new resource's
 *   children is left as it is, and the resource says `Degraded` `ChildNotOwned`;
 * - `quantities`: a copy of the first example with every quantity of its spec spelled otherwise
 *   (`1Gi` as `1024Mi`) becomes Ready, comes to rest and, reconciled again, writes nothing;
 * - `invalid-specs`: invalid specs made from the schema — a value of the wrong type, out of range,
 *   a pattern's miss, a choice not in an enum, an unknown field, an immutable field changed — each
 *   sent as a dry run and refused by the API server naming its field;
 * - `delete`: deleting an example removes it and every object it controls;
 * - `rbac`: every request the reconciler made is granted by the Roles the Operator construct makes
 *   for the controller (the grants it never used are in `unusedGrants`).
 *
 * @example
 * const report = await conformanceTest({
 *   controlPlane, // startControlPlane({ audit: true })
 *   controllers: 'controllers.ts',
 *   kind: 'Greeting',
 *   examples: [{ apiVersion: 'platform.example.com/v1alpha1', kind: 'Greeting', metadata: { name: 'g' }, spec: { text: 'hi' } }],
 * });
 * expect(report.problems).toEqual([]);
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  BuiltinTypes,
  type ControllerDeclaration,
  type CustomResourceObject,
  customResourceType,
  type KubeObject,
} from '../../constructs/contract';
import { apiVersionOf, HttpKubeClient, loadKubeConfig } from '../../operator/runtime/client';
import { DEFAULT_STATUS_COALESCE_MS } from '../../operator/runtime/reconcile';
import type { ControlPlane } from '../control-plane';
import { applyCrd, kindIn } from '../upgrade/steps';
import { VersionReconciler } from '../upgrade/reconciler-process';
import { waitUntil } from '../upgrade/wait';
import { auditLength, reconcilerAuditRequests, reconcilerWrites } from '../audit-log';
import { CustomResourceKind } from '../../constructs';
import {
  changedFields,
  conditionProblems,
  foreignStandIn,
  loopProblems,
  notChecked,
  rbacFindings,
  repeatedWrites,
  respelledQuantities,
  settledWriteProblem,
} from './checks';
import { invalidSpecProblems } from './invalid-specs';
import { restartsAndInterruptions, spareApiserverOf } from './interruptions';
import type { SpareApiserver } from '../plane/spare-apiserver';
import { grantsOf } from './grants';

export interface ConformanceOptions {
  /**
   * A control plane started with `audit: true`: the writes are read from its audit log. One the
   * test kit started has a spare API server to restart (`apiserver-restart`); a borrowed one not.
   */
  readonly controlPlane: Pick<ControlPlane, 'kubeconfig' | 'auditLog' | 'startSpareApiserver'>;
  /** A module exporting the controllers (the kind's among them). */
  readonly controllers: string;
  /** The kind under test. */
  readonly kind: string;
  /** Its examples, each with its apiVersion: resources that should become Ready. */
  readonly examples: readonly KubeObject[];
  /** The namespace made for them. @default `conformance-<random>` */
  readonly namespace?: string;
  /**
   * A copy of the first example under a new name, to live beside it: the checks that create one
   * (watch-cut, apiserver-restart, never-adopts, quantities) make it with this. A kind whose
   * resources each claim what only one may hold — a host, a port — gives each copy its own.
   * @default the example under the new name
   */
  readonly copy?: (example: KubeObject, name: string) => KubeObject;
}

/** The checks a run makes, in order. */
export const CONFORMANCE_CHECKS = [
  'ready',
  'settled',
  'restart',
  'watch-cut',
  'apiserver-restart',
  'never-adopts',
  'quantities',
  'invalid-specs',
  'delete',
  'rbac',
] as const;
export type ConformanceCheckName = (typeof CONFORMANCE_CHECKS)[number];

export interface ConformanceReport {
  /** Each check's problems: what the kind did, and where to look. Empty: it passed. */
  readonly checks: Readonly<Record<ConformanceCheckName, readonly string[]>>;
  /** Every problem, each prefixed with its check's name. */
  readonly problems: readonly string[];
  /** The checks that could not be made for this kind, and why (a pass of theirs would prove nothing). */
  readonly notChecked: readonly string[];
  /**
   * What the Roles the Operator construct makes for the controller grant that the run never used,
   * as `verb group/resource`: not a problem (a grant may serve what the examples never met, e.g.
   * a prune), but each is one to question.
   */
  readonly unusedGrants: readonly string[];
}

/** Runs the conformance checks of `options.kind`; see the module. */
export async function conformanceTest(options: ConformanceOptions): Promise<ConformanceReport> {
  const { kubeconfig, auditLog } = options.controlPlane;
  if (!auditLog)
    throw new Error('conformanceTest reads the writes from the audit log: start the control plane with audit: true');
  const decl = kindIn(options.controllers, options.kind);
  const namespace = options.namespace ?? `conformance-${Math.random().toString(36).slice(2, 8)}`;
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-conformance-'));
  const client = new HttpKubeClient(loadKubeConfig({ path: kubeconfig }), {
    fieldManager: 'conformance-test',
    userAgent: 'cdk8s-operator-kit-conformance-test',
  });
  // Named after the namespace: its requests are told from other runs' on the same plane by that name.
  const start = (name: string, through = kubeconfig) =>
    VersionReconciler.start({
      controllers: options.controllers,
      kind: options.kind,
      kubeconfig: through,
      name: `${namespace}${name}`,
      workDir,
    });
  const run = new ConformanceRun(client, decl, namespace, auditLog, options);
  // Started at once, beside the first checks; stopped with the run.
  const spare = spareApiserverOf(options.controlPlane);
  const running: { reconciler?: VersionReconciler } = {};
  try {
    await client.create(BuiltinTypes.Namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    await applyCrd(client, decl, namespace);
    return await checksInTurn(run, running, { start, spare, kubeconfig, workDir, examples: options.examples.length });
  } finally {
    await running.reconciler?.stop();
    const spareApiserver = await spare;
    if (spareApiserver && !(spareApiserver instanceof Error)) await spareApiserver.stop();
    client.close();
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

/** The checks in the order of CONFORMANCE_CHECKS; the reconciler they run now in `running`. */
async function checksInTurn(
  run: ConformanceRun,
  running: { reconciler?: VersionReconciler },
  o: {
    readonly start: (name: string, kubeconfig?: string) => Promise<VersionReconciler>;
    readonly spare: Promise<SpareApiserver | Error> | undefined;
    readonly kubeconfig: string;
    readonly workDir: string;
    readonly examples: number;
  },
): Promise<ConformanceReport> {
  const checks = Object.fromEntries(CONFORMANCE_CHECKS.map((c) => [c, [] as string[]])) as Record<
    ConformanceCheckName,
    string[]
  >;
  let reconciler = (running.reconciler = await o.start(''));
  checks.ready = await run.ready(reconciler);
  if (checks.ready.length > 0)
    return report(checks, [
      `${CONFORMANCE_CHECKS.filter((c) => c !== 'ready').join(', ')}: the examples never became Ready`,
    ]);
  checks.settled = await run.settled(reconciler);
  // Each starts and stops reconcilers of its own, the first of them stopping this one.
  running.reconciler = undefined;
  const restarts = await restartsAndInterruptions({ ...o, run, reconciler, spare: await o.spare });
  reconciler = running.reconciler = await o.start('-after-cut');
  Object.assign(checks, {
    restart: restarts.restart,
    'watch-cut': restarts['watch-cut'],
    'apiserver-restart': restarts['apiserver-restart'] ?? [],
  });
  // In turn: each makes a copy of the first example of its own, and deletes it (or dry runs one).
  const [adopts, quantities] = [await run.neverAdopts(), await run.quantities(reconciler)];
  Object.assign(checks, {
    'never-adopts': adopts ?? [],
    quantities: quantities ?? [],
    'invalid-specs': await run.invalidSpecs(),
  });
  checks.delete = await run.deletes(reconciler);
  const rights = run.rights();
  checks.rbac = rights.problems;
  return report(checks, notChecked(adopts, quantities, restarts['apiserver-restart']), rights.unused);
}

function report(
  checks: Record<ConformanceCheckName, string[]>,
  notChecked: string[] = [],
  unusedGrants: string[] = [],
): ConformanceReport {
  const problems = CONFORMANCE_CHECKS.flatMap((c) => checks[c].map((p) => `${c}: ${p}`));
  return { checks, problems, notChecked, unusedGrants };
}

/**
 * How long without a reconcile makes a rest: three of the runtime's status coalescing windows
 * (`DEFAULT_STATUS_COALESCE_MS`), by which a status write that waits is made and what it
 * triggers has begun.
 */
const REST_SPAN_MS = 3 * DEFAULT_STATUS_COALESCE_MS;

type Reconciled = CustomResourceObject<unknown, { conditions?: Record<string, unknown>[] }>;

/** Waits for `what`, giving back a problem instead of throwing when it does not come. */
async function waitFor(what: string, condition: () => Promise<boolean>, context: () => string): Promise<string[]> {
  try {
    await waitUntil(what, condition, context);
    return [];
  } catch (err) {
    return [err instanceof Error ? err.message : String(err)];
  }
}

/** The steps of one run, over the examples in their namespace. */
class ConformanceRun {
  private readonly type;
  private readonly examples: readonly KubeObject[];
  private readonly copy: (example: KubeObject, name: string) => KubeObject;

  constructor(
    private readonly client: HttpKubeClient,
    private readonly decl: ControllerDeclaration,
    private readonly namespace: string,
    readonly auditLog: string,
    options: Pick<ConformanceOptions, 'examples' | 'copy'>,
  ) {
    this.examples = options.examples;
    this.copy = options.copy ?? ((example, name) => ({ ...example, metadata: { ...example.metadata, name } }));
    this.type = customResourceType<Reconciled>(decl.for);
    this.begun = auditLength(auditLog);
  }

  /** Where the audit log stood when the run began: its reconcilers' requests come after. */
  private readonly begun: number;

  /** The audit logs of the run's own spare API servers, read whole. */
  private readonly otherAuditLogs: string[] = [];

  /** The rbac check reads the requests in `log` too: a spare API server's, begun by this run. */
  alsoAudited(log: string | undefined): void {
    if (log) this.otherAuditLogs.push(log);
  }

  /**
   * The rbac check: each request this run's reconcilers made (told apart by their names, which
   * start with the namespace) that the Operator construct's Roles do not grant, and the grants unused.
   */
  rights(): { problems: string[]; unused: string[] } {
    const requests = [
      ...reconcilerAuditRequests(this.auditLog, this.begun, this.namespace),
      ...this.otherAuditLogs.flatMap((log) => reconcilerAuditRequests(log, 0, this.namespace)),
    ];
    const { ungranted, unused } = rbacFindings(requests, grantsOf(this.decl));
    const problems = ungranted.map(
      (a) =>
        `${a}: made by the reconciler, but not granted by the Roles the Operator construct makes for it — Forbidden in a cluster; declare the type in the controller (owns, deletes, reads, creates or keeps)`,
    );
    return { problems, unused };
  }

  private get(name: string): Promise<Reconciled | undefined> {
    return this.client.get(this.type, name, this.namespace).catch(() => undefined);
  }

  /**
   * Until `name` is Ready at its generation (`what` the wait says): the wait's problem if it never
   * is, with its status and the reconciler's log, and the resource as last read.
   */
  async untilReady(
    name: string,
    what: string,
    reconciler: VersionReconciler,
  ): Promise<{ waited: string[]; last: Reconciled | undefined }> {
    let last: Reconciled | undefined;
    const waited = await waitFor(
      what,
      async () => {
        last = await this.get(name);
        return conditionProblems(last).length === 0;
      },
      () => `its status: ${JSON.stringify(last?.status)}\nthe reconciler's log:\n${reconciler.tail()}`,
    );
    return { waited, last };
  }

  /** Each example created and Ready at its generation, its conditions kstatus-readable. */
  async ready(reconciler: VersionReconciler): Promise<string[]> {
    for (const example of this.examples) await this.client.create(this.type, example, this.namespace);
    const problems: string[] = [];
    for (const example of this.examples) {
      const name = example.metadata.name ?? '';
      const { waited, last } = await this.untilReady(
        name,
        `${this.decl.for.kind} ${name} Ready at its generation`,
        reconciler,
      );
      problems.push(...(waited.length > 0 ? conditionProblems(last).map((p) => `${name}: ${p}`) : []));
    }
    return problems;
  }

  /**
   * Once Ready, the reconciler must come to rest without writing any object again and again; then
   * a no-op touch of each resource (an annotation) is reconciled, and must write nothing.
   */
  async settled(reconciler: VersionReconciler): Promise<string[]> {
    const loop = await this.restOrLoop(reconciler, auditLength(this.auditLog), 'once the examples were Ready');
    if (loop.length > 0) return loop;
    const names = this.examples.map((e) => e.metadata.name ?? '');
    const before = await Promise.all(names.map((name) => this.get(name)));
    const writes = await this.touchedWrites(reconciler, names);
    const after = await Promise.all(names.map((name) => this.get(name)));
    return writes.map((w) => {
      const i = names.findIndex((name) => w.endsWith(`/status ${name}`));
      return settledWriteProblem(w, i < 0 ? [] : changedFields(before[i]?.status, after[i]?.status, 'status'));
    });
  }

  /** The writes made when each of `names`, settled, is touched (an annotation) and reconciled again. */
  private async touchedWrites(reconciler: VersionReconciler, names: readonly string[]): Promise<string[]> {
    const before = (await reconciler.metrics())?.get('controller_runtime_reconcile_total') ?? 0;
    const mark = auditLength(this.auditLog);
    for (const name of names) {
      await this.client.mergePatch(this.type, name, this.namespace, {
        metadata: { annotations: { 'conformance.cdk8s-operator-kit/touched': 'true' } },
      });
    }
    await reconciler.settled(before + names.length, 'a reconcile of each touched resource');
    return reconcilerWrites(this.auditLog, mark, this.namespace);
  }

  /** A new reconciler over settled resources: it must write nothing. */
  async afterRestart(reconciler: VersionReconciler, mark: number): Promise<string[]> {
    const loop = await this.restOrLoop(reconciler, mark, 'after a restart');
    if (loop.length > 0) return loop;
    await reconciler.settled(this.examples.length, 'the restarted reconciler over the settled examples');
    return reconcilerWrites(this.auditLog, mark, this.namespace).map(
      (w) =>
        `${w} by a reconciler started again over settled resources: what it renders depends on the process (a value made at its start, a cache it lacks) — \`cdk8s-operator-kit diff\` of the resource shows the change`,
    );
  }

  /**
   * Until the reconciler rests — nothing queued or running, and no reconcile for `REST_SPAN_MS`,
   * past the delay of a status write it coalesces — or has written one object `LOOP_WRITES` times
   * since `mark`: the loop, as problems, or none. (A loop runs at the pace of that delay: a rest
   * judged from one scrape to the next would be seen between two of its turns.)
   */
  private async restOrLoop(reconciler: VersionReconciler, mark: number, when: string): Promise<string[]> {
    let last = { total: -1, since: Date.now() };
    let repeated: [string, number][] = [];
    await waitUntil(
      `the reconciler at rest ${when}, or writing one object again and again`,
      async () => {
        repeated = repeatedWrites(reconcilerWrites(this.auditLog, mark, this.namespace));
        if (repeated.length > 0) return true;
        const m = await reconciler.metrics();
        const total = m?.get('controller_runtime_reconcile_total') ?? -1;
        const idle = m?.get('workqueue_depth') === 0 && m.get('controller_runtime_active_workers') === 0;
        if (total !== last.total || !idle) last = { total, since: Date.now() };
        return Date.now() - last.since >= REST_SPAN_MS;
      },
      () => reconciler.tail(),
    );
    return loopProblems(repeated, when);
  }

  /**
   * A copy of the first example under a new name, one of whose children's names is taken first by
   * an object of someone else's (a stand-in of the example's child's kind, owned by nobody): the copy must say
   * `Degraded` `ChildNotOwned`, and the object must stay as it was. Undefined: no child it can
   * stand in for, so not checked.
   */
  async neverAdopts(): Promise<string[] | undefined> {
    const [example] = this.examples;
    if (!example) return undefined;
    const name = example.metadata.name ?? '';
    const live = await this.get(name);
    const children = await this.childrenOf(live?.metadata.uid);
    const newName = `${name}-x`.slice(0, 63);
    const foreign = foreignStandIn(children, name, newName);
    if (!foreign) return undefined;
    const created = await this.client.create(foreign.type, foreign.object, this.namespace);
    await this.client.create(this.type, this.copy(example, newName), this.namespace);
    let last: Reconciled | undefined;
    const what = `${foreign.type.kind} ${foreign.object.metadata.name ?? ''}`;
    const problems = await waitFor(
      `${this.decl.for.kind} ${newName} Degraded ChildNotOwned (its ${what} is someone else's)`,
      async () => {
        last = await this.get(newName);
        return (last?.status?.conditions ?? []).some(
          (c) => c.type === 'Degraded' && c.status === 'True' && c.reason === 'ChildNotOwned',
        );
      },
      () => `its status: ${JSON.stringify(last?.status)}`,
    );
    const after = await this.client.get(foreign.type, foreign.object.metadata.name ?? '', this.namespace);
    if (after.metadata.resourceVersion !== created.metadata.resourceVersion)
      problems.push(`${what}, someone else's, was changed by the reconciler: it must never be written`);
    await this.client.delete(this.type, newName, this.namespace);
    await this.client.delete(foreign.type, foreign.object.metadata.name ?? '', this.namespace);
    return problems;
  }

  /**
   * A copy of the first example under a new name with every quantity of its spec spelled
   * otherwise (the same amount): it must become Ready and come to rest. A kind that compares a
   * quantity as written with what the API server gives back (`1024Mi` against `1Gi`) applies
   * it again and again. Undefined: the example sets no quantity, so not checked.
   */
  async quantities(reconciler: VersionReconciler): Promise<string[] | undefined> {
    const [example] = this.examples;
    const kind = this.decl.for;
    if (!example || !(kind instanceof CustomResourceKind)) return undefined;
    const name = `${example.metadata.name ?? ''}-q`.slice(0, 63);
    const copy = this.copy(example, name);
    const { spec, changes } = respelledQuantities(kind.specSchema(), copy.spec);
    if (changes.length === 0) return undefined;
    const spelled = changes.join(', ');
    const mark = auditLength(this.auditLog);
    try {
      await this.client.create(this.type, { ...copy, spec }, this.namespace);
    } catch (err) {
      return [
        `${name}, the example with ${spelled}, was refused: ${err instanceof Error ? err.message : String(err)} — the schema refuses a spelling of a quantity the API server takes in core types`,
      ];
    }
    const problems = (
      await this.untilReady(name, `${kind.kind} ${name} (${spelled}) Ready at its generation`, reconciler)
    ).waited;
    // Never Ready for writing a child again and again: that is what to say.
    const looping = repeatedWrites(reconcilerWrites(this.auditLog, mark, this.namespace));
    if (looping.length > 0) problems.splice(0, problems.length, ...loopProblems(looping, `with ${spelled}`));
    if (problems.length === 0) problems.push(...(await this.restOrLoop(reconciler, mark, `with ${spelled}`)));
    if (problems.length === 0)
      problems.push(
        ...(await this.touchedWrites(reconciler, [name])).map(
          (w) =>
            `${w} at every reconcile of ${name} (${spelled}): a quantity compared as written with what the API server gives back (${changes[0]?.split(': ')[1] ?? ''} is one amount) — compare quantities by value`,
        ),
      );
    await this.client.delete(this.type, name, this.namespace);
    await waitFor(
      `${kind.kind} ${name} deleted`,
      async () => (await this.get(name)) === undefined,
      () => '',
    );
    return problems;
  }

  /** The invalid specs made from the schema and the first example, each refused naming its field. */
  async invalidSpecs(): Promise<string[]> {
    const [example] = this.examples;
    const kind = this.decl.for;
    const live = example && (await this.get(example.metadata.name ?? ''));
    if (!example || !live || !(kind instanceof CustomResourceKind)) return [];
    return invalidSpecProblems(this.client, this.type, example, live, kind.specSchema());
  }

  /** Each example deleted: it goes (its finalizers done), and so does every object it controlled. */
  async deletes(reconciler: VersionReconciler): Promise<string[]> {
    const problems: string[] = [];
    for (const example of this.examples) {
      const name = example.metadata.name ?? '';
      const uid = (await this.get(name))?.metadata.uid;
      await this.client.delete(this.type, name, this.namespace);
      problems.push(...(await this.goneWithChildren(name, uid, reconciler)));
    }
    return problems;
  }

  /** Waits until `name` (of `uid`) and every object it controlled are gone: a problem if they stay. */
  async goneWithChildren(
    name: string,
    uid: string | undefined,
    reconciler: VersionReconciler,
    though = '',
  ): Promise<string[]> {
    let left: string[] = [];
    return waitFor(
      `${this.decl.for.kind} ${name} and what it controls deleted${though}`,
      async () => {
        const gone = (await this.get(name)) === undefined;
        left = (await this.childrenOf(uid)).map((c) => `${c.kind ?? ''}/${c.metadata.name ?? ''}`);
        return gone && left.length === 0;
      },
      () =>
        `still there: ${left.join(', ') || `${this.decl.for.kind} ${name}`}\nthe reconciler's log:\n${reconciler.tail()}`,
    );
  }

  /** A copy of the first example named with `suffix`, created: its name, or undefined when there is no example. */
  async createCopy(suffix: string): Promise<string | undefined> {
    const [example] = this.examples;
    if (!example) return undefined;
    const name = `${example.metadata.name ?? ''}${suffix}`.slice(0, 63);
    await this.client.create(this.type, this.copy(example, name), this.namespace);
    return name;
  }

  /** Deletes the resource `name` (it goes once its finalizers are done). */
  async remove(name: string): Promise<void> {
    await this.client.delete(this.type, name, this.namespace);
  }

  get kind(): string {
    return this.decl.for.kind;
  }

  /** The objects of the kind's owned types in the namespace that `uid` controls. */
  private async childrenOf(uid: string | undefined): Promise<KubeObject[]> {
    if (!uid) return [];
    const found: KubeObject[] = [];
    for (const type of this.decl.owns ?? []) {
      if (!type.namespaced) continue;
      for (const o of (await this.client.list(type, this.namespace)).items)
        if (o.metadata.ownerReferences?.some((r) => r.uid === uid && r.controller === true))
          found.push({ ...o, kind: type.kind, apiVersion: apiVersionOf(type) });
    }
    return found;
  }
}
