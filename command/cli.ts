#!/usr/bin/env node
/**
 * `cdk8s-operator-kit`: the package's command.
 *   init     a new operator project: a kind, its construct and controller, tests, the reconciler
 *   create   kind <Kind>: add a kind to such a project
 *   image    build a reconciler image (OCI archive) from an entry point, without a daemon
 *   bundle   bundle an entry point into one JavaScript file, as the image holds it
 *   cluster  a local control plane (etcd, kube-apiserver, controllers, simulated nodes)
 *   run      run an entry point's reconciler out of cluster, against $KUBECONFIG
 *   helm     the operator's Helm chart, from its controllers
 *   render   the children resources become, offline, through the code the reconciler runs
 *   diff     what the reconciler would change in a live cluster, by server-side dry runs
 *   plan     the same for every resource of a kind: what a new operator version would do
 *   trace    a live resource, its children, their pods and claims, each with its verdict
 */
import { ImageBuildError } from './image/tools';
import { RenderError } from './errors';
import { ScaffoldError } from './scaffold';
import { UsageError, type Verb } from './verbs/verb';
import { initVerb } from './verbs/init';
import { createVerb } from './verbs/create';
import { imageVerb } from './verbs/image';
import { bundleVerb } from './verbs/bundle';
import { clusterVerb } from './verbs/cluster';
import { runVerb } from './verbs/run';
import { helmVerb } from './verbs/helm';
import { olmBundleVerb } from './verbs/olm-bundle';
import { renderVerb } from './verbs/render';
import { diffVerb } from './verbs/diff';
import { planVerb } from './verbs/plan';
import { traceVerb } from './verbs/trace';

/** The commands, a file each in verbs/, in the order the usage lists them. */
const VERBS: Record<string, Verb> = {
  init: initVerb,
  create: createVerb,
  image: imageVerb,
  bundle: bundleVerb,
  cluster: clusterVerb,
  run: runVerb,
  helm: helmVerb,
  'olm-bundle': olmBundleVerb,
  render: renderVerb,
  diff: diffVerb,
  plan: planVerb,
  trace: traceVerb,
};

/** Each command's synopsis and what it does: its `--help`, and together the command's usage. */
export const COMMAND_HELP: Record<string, string> = Object.fromEntries(
  Object.entries(VERBS).map(([name, verb]) => [name, verb.help]),
);

/** Each command's run, by name. */
export const COMMANDS: Record<string, (args: string[]) => Promise<number>> = Object.fromEntries(
  Object.entries(VERBS).map(([name, verb]) => [name, (args: string[]) => verb.run(args)]),
);

const USAGE = `Usage: cdk8s-operator-kit <command> [flags]   (cdk8s-operator-kit <command> --help for one)

Commands:
${Object.values(COMMAND_HELP).join('')}`;

/**
 * node:util parseArgs refusing the arguments (an unknown flag, a missing value). Not `instanceof
 * Error`: Node's own errors may come from another realm (a test's sandbox).
 */
function isParseArgsError(err: unknown): err is Error {
  return (
    typeof err === 'object' &&
    err !== null &&
    'code' in err &&
    typeof err.code === 'string' &&
    err.code.startsWith('ERR_PARSE_ARGS') &&
    'message' in err
  );
}

/** `--help` or `-h` among a command's own arguments (not after `--`, which `run` passes on to the reconciler). */
function asksForHelp(args: readonly string[]): boolean {
  const own = args.includes('--') ? args.slice(0, args.indexOf('--')) : args;
  return own.includes('--help') || own.includes('-h');
}

/** One command's usage, or every command's. */
function usageOf(command: string | undefined): string {
  const help = command === undefined ? undefined : COMMAND_HELP[command];
  return help ? `Usage: cdk8s-operator-kit ${help.trimStart()}` : USAGE;
}

/**
 * The exit code of a failure the user can act on — a usage error (2, with the command's usage) or
 * a failed build, render or scaffold (1), said in one line — or undefined for a failure of ours.
 */
function reportFailure(err: unknown, command: string): number | undefined {
  const usage = err instanceof UsageError || isParseArgsError(err);
  if (!usage && !(err instanceof ImageBuildError || err instanceof RenderError || err instanceof ScaffoldError))
    return undefined;
  process.stderr.write(`cdk8s-operator-kit: ${err.message}\n${usage ? `\n${usageOf(command)}` : ''}`);
  return usage ? 2 : 1;
}

/** Runs the command line; resolves to the exit code (2 for a usage error, 1 for a failed build). */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === 'help') {
    process.stdout.write(USAGE);
    return command ? 0 : 2;
  }
  const run = COMMANDS[command];
  if (run && asksForHelp(rest)) {
    process.stdout.write(usageOf(command));
    return 0;
  }
  try {
    if (!run) throw new UsageError(`unknown command "${command}"`);
    return await run(rest);
  } catch (err) {
    const code = reportFailure(err, command);
    if (code === undefined) throw err;
    return code;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
