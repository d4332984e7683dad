/** One command of `cdk8s-operator-kit`: its `--help` (a synopsis and what it does) and what it runs. */
export interface Verb {
  readonly help: string;
  /** Runs the command with its own arguments; resolves to the exit code. */
  run(args: string[]): Promise<number>;
}

/** The arguments are not a command line this command takes: exit 2, with the command's usage. */
export class UsageError extends Error {}
