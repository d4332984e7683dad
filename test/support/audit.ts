import * as fs from 'node:fs';
import type { ReconcilerProcess } from './reconciler';

/** One write request from the control plane's audit log (its policy records writes only). */
export interface AuditedWrite {
  readonly user: string;
  readonly userAgent: string;
  readonly verb: string;
  readonly resource: string;
  readonly requestURI: string;
  /** The answer's HTTP status (a create of a name that exists: 409). */
  readonly code?: number;
}

function auditLogPath(): string {
  const log = process.env.OPKIT_TEST_AUDIT_LOG;
  if (!log) throw new Error('the control plane runs without an audit log');
  return log;
}

function readLines(): string[] {
  return fs.readFileSync(auditLogPath(), 'utf8').split('\n').filter(Boolean);
}

/** The audit log's length now: pass it to `writesBy` to see only what comes after. */
export function auditMark(): number {
  return readLines().length;
}

/**
 * The writes these reconciler processes made after `mark`. Each process names its identity in its
 * User-Agent, so writes of other suites running at the same time as the same ServiceAccount (every
 * suite installs the same operators) are not counted.
 */
export function writesBy(processes: readonly ReconcilerProcess[], mark = 0): AuditedWrite[] {
  const agents = processes.map((p) => `(${p.identity})`);
  return writesWhere((agent) => agents.some((a) => agent.endsWith(a)), mark);
}

/** The write requests after `mark` whose User-Agent ends with `suffix`, e.g. a command's `(plan)`. */
export function writesByAgent(suffix: string, mark = 0): AuditedWrite[] {
  return writesWhere((agent) => agent.endsWith(suffix), mark);
}

function writesWhere(agentMatches: (userAgent: string) => boolean, mark: number): AuditedWrite[] {
  return readLines()
    .slice(mark)
    .map((line) => JSON.parse(line))
    .filter((e) => agentMatches(String(e.userAgent ?? '')))
    .map((e) => ({
      user: e.user?.username ?? '',
      userAgent: e.userAgent,
      verb: e.verb,
      resource: e.objectRef?.resource ?? '',
      requestURI: e.requestURI,
      code: e.responseStatus?.code,
    }));
}
