/**
 * `kubectl create [-n ns] [--dry-run=server] [-o json] -f -` of one object, sent as the request
 * kubectl sends (a POST with `fieldValidation=Strict` and `fieldManager=kubectl-create`) on a kept
 * connection instead of a kubectl process: the suite creates a few hundred objects this way, most
 * of them invalid specs the API server must refuse, and each kubectl start costs ~140 ms of CPU
 * (its discovery read and its TLS set-up) against ~1 ms for the request. The answer is printed as
 * kubectl prints it: `<kind>.<group>/<name> created`, the object for `-o json`, and a refusal as
 * `The <Kind> "<name>" is invalid: <field>: <why>` or as `Error from server (<reason>): error
 * when creating "STDIN": <the server's message>`. Any other form returns undefined, and the
 * caller runs the real kubectl.
 */
import { apiRequest, apiRequestAsync, type ApiGetResult, refusalMessage, servedKind } from './api-get';
import type { SyncResponse } from './sync-http';

interface CreateRequest {
  readonly namespace?: string;
  readonly dryRun: boolean;
  readonly json: boolean;
}

/** The forms the tests use; undefined for any other flag or argument. */
function parseCreate(args: readonly string[]): CreateRequest | undefined {
  if (args[0] !== 'create') return undefined;
  let namespace: string | undefined;
  let dryRun = false;
  let json = false;
  let stdin = false;
  for (let i = 1; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '-n' || arg === '--namespace') namespace = args[++i];
    else if (arg.startsWith('--namespace=')) namespace = arg.slice('--namespace='.length);
    else if (arg === '--dry-run=server') dryRun = true;
    else if (arg === '-ojson' || arg === '-o=json' || arg === '--output=json') json = true;
    else if ((arg === '-o' || arg === '--output') && args[i + 1] === 'json') json = !!args[++i];
    else if ((arg === '-f' || arg === '--filename') && args[i + 1] === '-') stdin = !!args[++i];
    else return undefined;
  }
  return stdin ? { namespace, dryRun, json } : undefined;
}

interface KubeObjectInput {
  apiVersion: string;
  kind: string;
  metadata?: { name?: string; generateName?: string; namespace?: string };
}

/** The one object `input` holds as JSON; undefined for YAML, a List or several objects. */
function oneObject(input: string | undefined): KubeObjectInput | undefined {
  if (!input?.trimStart().startsWith('{')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(input);
  } catch {
    return undefined;
  }
  const o = parsed as Partial<KubeObjectInput>;
  if (typeof o.apiVersion !== 'string' || typeof o.kind !== 'string' || o.kind.endsWith('List')) return undefined;
  return o as KubeObjectInput;
}

interface InvalidStatus {
  reason?: string;
  details?: { kind?: string; name?: string; causes?: { field?: string; message?: string }[] };
}

/**
 * How kubectl words an object refused as Invalid (a 422 with its causes): `The <Kind> "<name>" is
 * invalid: <field>: <message>`, or one cause a line, each after `* `, when there are several.
 */
function invalidMessage(body: string): string | undefined {
  let status: InvalidStatus;
  try {
    status = JSON.parse(body) as InvalidStatus;
  } catch {
    return undefined;
  }
  const details = status.details;
  if (status.reason !== 'Invalid' || !details) return undefined;
  const what =
    details.kind || details.name
      ? `The ${details.kind ?? ''} "${details.name ?? ''}" is invalid`
      : 'The request is invalid';
  const causes = (details.causes ?? []).map((c) => `${c.field ?? ''}: ${c.message ?? ''}`);
  if (causes.length === 0) return what;
  if (causes.length === 1) return `${what}: ${causes[0]}`;
  return `${what}: \n${causes.map((c) => `* ${c}`).join('\n')}`;
}

/** The POST that makes the object, and how kubectl words its answer. */
interface CreateByRequest {
  readonly post: { readonly method: 'POST'; readonly path: string; readonly body: object };
  readonly answer: (answer: SyncResponse) => ApiGetResult;
}

/** The request kubectl would send for `args` with `input` on stdin; undefined for another form. */
function createByRequest(
  args: readonly string[],
  input: string | undefined,
  kubeconfig: string,
): CreateByRequest | undefined {
  const request = parseCreate(args);
  const object = request && oneObject(input);
  const served = object && servedKind(kubeconfig, object.apiVersion, object.kind);
  if (!request || !object || !served) return undefined;
  const { type } = served;
  const own = object.metadata?.namespace;
  // kubectl refuses a namespace given twice, differently: let it say so.
  if (type.namespaced && own && request.namespace && own !== request.namespace) return undefined;
  const namespace = type.namespaced ? (own ?? request.namespace ?? served.namespace) : undefined;
  const base = type.group ? `/apis/${type.group}/${type.version}` : `/api/${type.version}`;
  const where = namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  const query = new URLSearchParams({
    ...(request.dryRun ? { dryRun: 'All' } : {}),
    fieldManager: 'kubectl-create',
    fieldValidation: 'Strict',
  });
  const kind = object.kind.toLowerCase();
  const typeName = type.group ? `${kind}.${type.group}` : kind;
  return {
    post: { method: 'POST', path: `${base}${where}/${type.resource}?${query.toString()}`, body: object },
    answer: (answer) => {
      if (answer.status !== 201 && answer.status !== 200) {
        const refusal =
          invalidMessage(answer.body) ??
          refusalMessage(answer).replace(/^(Error from server \([^)]*\)): /, '$1: error when creating "STDIN": ');
        return { code: 1, stdout: '', stderr: `${refusal}\n` };
      }
      if (request.json) return { code: 0, stdout: answer.body, stderr: '' };
      const made = JSON.parse(answer.body) as { metadata: { name: string } };
      const suffix = request.dryRun ? ' (server dry run)' : '';
      return { code: 0, stdout: `${typeName}/${made.metadata.name} created${suffix}\n`, stderr: '' };
    },
  };
}

/** kubectl's answer to `args` with `input` on stdin, or undefined to run kubectl. */
export function apiCreate(
  args: readonly string[],
  input: string | undefined,
  kubeconfig: string,
): ApiGetResult | undefined {
  const create = createByRequest(args, input, kubeconfig);
  const answer = create && apiRequest(kubeconfig, create.post);
  return answer && create.answer(answer);
}

/**
 * apiCreate without blocking this thread while the server answers (for kubectlAsync: the server
 * may call back a webhook this process serves), or undefined to run kubectl.
 */
export function apiCreateAsync(
  args: readonly string[],
  input: string | undefined,
  kubeconfig: string,
): Promise<ApiGetResult> | undefined {
  const create = createByRequest(args, input, kubeconfig);
  if (!create) return undefined;
  return apiRequestAsync(kubeconfig, create.post)?.then((a) => create.answer(a));
}
