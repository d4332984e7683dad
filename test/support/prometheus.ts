/**
 * A real Prometheus (built by testing/build-prometheus.sh from its Go module) on loopback,
 * scraping what a synthesized ServiceMonitor describes and evaluating a synthesized
 * PrometheusRule, with `promtool` to check both.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { freePort } from '../../testing/control-plane';
import { goTool } from './go-tool';
import { eventually } from './kube';
import { httpGet } from './reconciler';
import type { K8sObject } from './synth';

const PROMETHEUS = goTool({ script: 'testing/build-prometheus.sh', env: 'OPKIT_TEST_PROMETHEUS', what: 'Prometheus' });

/** Builds (or finds cached) Prometheus and promtool and tells the test files through the environment. */
export function provisionPrometheus(): void {
  PROMETHEUS.provision();
}

/**
 * Prometheus and promtool, or why the tests that need them cannot run: the version
 * testing/build-prometheus.sh pins, built from the Go module proxy and cached (provisioned by the
 * integration tier's set-up, as helm and the control plane are).
 */
export function prometheusBinaries(): { prometheus: string; promtool: string; missing?: string } {
  const { bin: dir, missing } = PROMETHEUS.binary();
  if (!dir) return { prometheus: '', promtool: '', missing };
  return { prometheus: path.join(dir, 'prometheus'), promtool: path.join(dir, 'promtool') };
}

/** `promtool <args>`: its exit code and what it said. */
export function promtool(args: string[]): { code: number | null; out: string } {
  const r = spawnSync(prometheusBinaries().promtool, args, { encoding: 'utf8' });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

/**
 * The scrape job a Prometheus Operator makes of a ServiceMonitor's first endpoint, for a target
 * on this machine instead of the Service's endpoints: the same scheme, path, label handling,
 * credentials (the pod's token, here a file holding the same ServiceAccount's token) and TLS
 * settings. The job is named after the Service, as the Prometheus Operator names it.
 */
export function scrapeJobOf(
  monitor: K8sObject,
  options: { job: string; target: string; tokenFile: string; interval: string },
): Record<string, unknown> {
  const [endpoint] = monitor.spec.endpoints as {
    scheme: string;
    path: string;
    honorLabels?: boolean;
    bearerTokenFile?: string;
    tlsConfig?: { insecureSkipVerify?: boolean };
  }[];
  if (!endpoint) throw new Error(`ServiceMonitor ${monitor.metadata.name} has no endpoint`);
  return {
    job_name: options.job,
    scheme: endpoint.scheme,
    metrics_path: endpoint.path,
    honor_labels: endpoint.honorLabels ?? false,
    scrape_interval: options.interval,
    ...(endpoint.bearerTokenFile ? { authorization: { credentials_file: options.tokenFile } } : {}),
    ...(endpoint.tlsConfig
      ? { tls_config: { insecure_skip_verify: endpoint.tlsConfig.insecureSkipVerify ?? false } }
      : {}),
    static_configs: [{ targets: [options.target] }],
  };
}

/** The rule file Prometheus loads for a PrometheusRule: its groups, as they are. */
export function ruleFileOf(rule: K8sObject): string {
  return stringify({ groups: rule.spec.groups }, { lineWidth: 0 });
}

interface Alert {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
}

/** A Prometheus process with its own data directory, on a free loopback port. */
export class Prometheus {
  private readonly logs: string[] = [];

  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
    readonly dir: string,
  ) {
    const collect = (c: Buffer) => this.logs.push(...c.toString('utf8').split('\n').filter(Boolean));
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
  }

  /** Starts Prometheus with these scrape jobs and rule files, evaluating every second. */
  static async start(options: { scrapeConfigs: Record<string, unknown>[]; rules: string[] }): Promise<Prometheus> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-prometheus-'));
    const ruleFiles = options.rules.map((text, i) => {
      const file = path.join(dir, `rules-${i}.yaml`);
      fs.writeFileSync(file, text);
      return file;
    });
    const config = path.join(dir, 'prometheus.yaml');
    fs.writeFileSync(
      config,
      stringify({
        global: { scrape_interval: '1s', evaluation_interval: '1s' },
        rule_files: ruleFiles,
        scrape_configs: options.scrapeConfigs,
      }),
    );
    const check = promtool(['check', 'config', config]);
    if (check.code !== 0) throw new Error(`promtool check config failed:\n${check.out}`);
    const port = await freePort();
    const child = spawn(
      prometheusBinaries().prometheus,
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${path.join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        // Nothing leaves the machine: no update checks or remote writes are configured, and the
        // console templates the package points at are not needed.
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const prometheus = new Prometheus(child, `http://127.0.0.1:${port}`, dir);
    await eventually(
      'Prometheus to be ready',
      async () => {
        if (child.exitCode !== null) throw new Error(`Prometheus exited:\n${prometheus.logs.join('\n')}`);
        return (await httpGet(`${prometheus.url}/-/ready`)).status === 200 ? true : undefined;
      },
      60_000,
    );
    return prometheus;
  }

  private async api<T>(pathAndQuery: string): Promise<T> {
    const { status, body } = await httpGet(`${this.url}/api/v1/${pathAndQuery}`, 10_000);
    if (status !== 200) throw new Error(`Prometheus /api/v1/${pathAndQuery}: HTTP ${status} ${body}`);
    return (JSON.parse(body) as { data: T }).data;
  }

  /** An instant query's result vector (or scalar, as one sample). */
  async query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
    const data = await this.api<{ resultType: string; result: unknown }>(`query?query=${encodeURIComponent(expr)}`);
    if (data.resultType === 'scalar') return [{ metric: {}, value: data.result as [number, string] }];
    return data.result as { metric: Record<string, string>; value: [number, string] }[];
  }

  async alerts(): Promise<Alert[]> {
    return (await this.api<{ alerts: Alert[] }>('alerts')).alerts;
  }

  /** Every alerting rule loaded, with its health (`ok` once evaluated without error). */
  async rules(): Promise<{ name: string; health: string; lastError?: string }[]> {
    const data = await this.api<{ groups: { rules: { name: string; health: string; lastError?: string }[] }[] }>(
      'rules?type=alert',
    );
    return data.groups.flatMap((g) => g.rules);
  }

  /** Every scrape target and its health. */
  async targets(): Promise<{ labels: Record<string, string>; health: string; lastError: string }[]> {
    return (
      await this.api<{ activeTargets: { labels: Record<string, string>; health: string; lastError: string }[] }>(
        'targets',
      )
    ).activeTargets;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((r) => this.child.once('exit', r));
      this.child.kill('SIGTERM');
      await exited;
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
