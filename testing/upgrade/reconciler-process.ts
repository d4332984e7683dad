/**
 * One version of an operator's controllers run as its reconciler would run out of cluster: a
 * child process of `runOperator` over the module's declarations, its webhooks served on
 * loopback (routed from their Services by the control plane's egress proxy), its metrics on a
 * free loopback port, read to know when it has settled.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { freePort } from '../free-port';
import { waitUntil } from './wait';

/** The module of `runOperator` beside this one (sources under tsx, or the compiled package). */
function operatorModule(): string {
  return path.join(__dirname, '..', '..', 'operator', __filename.endsWith('.ts') ? 'index.ts' : 'index.js');
}

/** A reconciler process of one version. */
export class VersionReconciler {
  private readonly logs: string[] = [];
  private readonly exited: Promise<number | null>;

  private constructor(
    private readonly child: ChildProcess,
    private readonly metricsPort: number,
    readonly name: string,
  ) {
    const collect = (chunk: Buffer) => {
      this.logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      this.logs.splice(0, Math.max(0, this.logs.length - 200));
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    this.exited = new Promise((resolve) => {
      child.once('exit', (code) => {
        resolve(code);
      });
    });
  }

  /** Starts the controller of `kind` a module exports, against the control plane of `kubeconfig`. */
  static async start(options: {
    readonly controllers: string;
    /** The kind upgraded: only its controller runs (the module's others have no CRD installed here). */
    readonly kind: string;
    readonly kubeconfig: string;
    readonly name: string;
    readonly workDir: string;
  }): Promise<VersionReconciler> {
    const entry = path.join(options.workDir, `${options.name}-reconciler.ts`);
    fs.writeFileSync(
      entry,
      [
        `import { runOperator } from ${JSON.stringify(operatorModule())};`,
        `import * as module from ${JSON.stringify(path.resolve(options.controllers))};`,
        'const controllers = Object.values(module).flatMap((v: unknown) => (Array.isArray(v) ? v : [v]))',
        `  .filter((d: any) => typeof d?.name === 'string' && d?.for?.kind === ${JSON.stringify(options.kind)});`,
        'runOperator({ controllers: [...new Set(controllers)] }).then((code) => process.exit(code));',
        '',
      ].join('\n'),
    );
    const [health, metrics] = [await freePort(), await freePort()];
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        entry,
        `--kubeconfig=${options.kubeconfig}`,
        `--health-probe-bind-address=127.0.0.1:${health}`,
        `--metrics-bind-address=127.0.0.1:${metrics}`,
        '--metrics-secure=false',
        '--webhook-loopback',
      ],
      { env: { ...process.env, KUBECONFIG: '', POD_NAME: options.name }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    return new VersionReconciler(child, metrics, options.name);
  }

  /** The last lines of its log, for a failure's message. */
  tail(): string {
    return this.logs.slice(-30).join('\n');
  }

  /** Sums of its metrics by name (labels aside). */
  async metrics(): Promise<Map<string, number> | undefined> {
    const body = await new Promise<string | undefined>((resolve) => {
      const req = http.get({ host: '127.0.0.1', port: this.metricsPort, path: '/metrics', timeout: 10_000 }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          resolve(res.statusCode === 200 ? text : undefined);
        });
      });
      req.on('error', () => {
        resolve(undefined);
      });
      req.on('timeout', () => {
        req.destroy();
      });
    });
    if (body === undefined) return undefined;
    const sums = new Map<string, number>();
    for (const line of body.split('\n')) {
      const m = /^([a-z_:]+)(\{[^}]*\})? ([0-9.e+-]+)$/.exec(line);
      if (m?.[1] && m[3]) sums.set(m[1], (sums.get(m[1]) ?? 0) + Number(m[3]));
    }
    return sums;
  }

  /**
   * Until it has reconciled at least `resources` times and is idle: nothing queued, no worker
   * busy, and no reconcile since the scrape before.
   */
  async settled(resources: number, what: string): Promise<void> {
    let previous = -1;
    await waitUntil(
      `${this.name} settled (${what})`,
      async () => {
        const m = await this.metrics();
        const total = m?.get('controller_runtime_reconcile_total') ?? -1;
        const idle = m?.get('workqueue_depth') === 0 && m.get('controller_runtime_active_workers') === 0;
        const quiet = idle && total >= resources && total === previous;
        previous = total;
        return quiet;
      },
      () => this.tail(),
    );
  }

  /** Stops it as a pod is stopped (SIGTERM); resolves with its exit code. */
  async stop(): Promise<number | null> {
    if (this.child.exitCode === null) this.child.kill('SIGTERM');
    return this.exited;
  }
}
