/**
 * The kit's reconciler image: every controller of the kit, `--controllers` picks which.
 */
import { KIT_CONTROLLERS } from './constructs/kit-controllers';
import { runOperator } from './operator/run';

export function main(argv: string[]): Promise<number> {
  return runOperator({ controllers: KIT_CONTROLLERS, argv });
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`${String(err)}\n`);
      process.exit(1);
    },
  );
}
