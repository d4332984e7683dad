import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { buildApps } from '../../main';

/** A Kubernetes object as synthesized. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [k: string]: unknown };
  [k: string]: any;
}

export interface SynthResult {
  /** The temp directory everything was written to (like dist/). */
  readonly dir: string;
  /** File contents by path relative to `dir`. */
  readonly files: Record<string, string>;
  /** Every object of the operator files. */
  readonly objects: K8sObject[];
  /** Every sample resource. */
  readonly samples: K8sObject[];
}

/** Synthesizes the whole project, as `npm run synth` does, into a fresh temp directory. */
export function synthProject(): SynthResult {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-synth-'));
  Object.values(buildApps(dir)).forEach((app) => {
    app.synth();
  });
  const files = readTree(dir);
  const parse = (prefix: (f: string) => boolean) =>
    Object.entries(files)
      .filter(([f]) => prefix(f))
      .sort(([a], [b]) => a.localeCompare(b))
      .flatMap(([, text]) => parseYaml(text));
  return {
    dir,
    files,
    objects: parse((f) => !f.includes('/')),
    samples: parse((f) => f.startsWith('samples/')),
  };
}

/** The objects of a YAML stream; throws for a file that is not there (`files[name]` of a synth). */
export function parseYaml(text: string | undefined): K8sObject[] {
  if (text === undefined) throw new Error('no such file in the synth output');
  return parseAllDocuments(text)
    .map((d) => d.toJS())
    .filter(Boolean);
}

/** Every file under `dir`, by relative path. */
export function readTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[path.relative(dir, p)] = fs.readFileSync(p, 'utf8');
    }
  };
  walk(dir);
  return out;
}

/** The objects of one kind (and name, when given). */
export function find(objects: K8sObject[], kind: string, name?: string): K8sObject[] {
  return objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
}

/** Exactly one object of that kind and name; throws otherwise. */
export function one(objects: K8sObject[], kind: string, name: string): K8sObject {
  const found = find(objects, kind, name);
  const [first] = found;
  if (!first || found.length !== 1) throw new Error(`expected one ${kind} ${name}, found ${found.length}`);
  return first;
}

/** Pod specs of every workload (Deployments, StatefulSets, Jobs, CronJobs, Pods). */
export function podSpecsOf(objects: K8sObject[]): { owner: string; spec: any }[] {
  const out: { owner: string; spec: any }[] = [];
  for (const o of objects) {
    const owner = `${o.kind}/${o.metadata.name}`;
    if (o.kind === 'Pod') out.push({ owner, spec: o.spec });
    else if (o.kind === 'CronJob') out.push({ owner, spec: o.spec.jobTemplate.spec.template.spec });
    else if (o.spec?.template?.spec) out.push({ owner, spec: o.spec.template.spec });
  }
  return out;
}
