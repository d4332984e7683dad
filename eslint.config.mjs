// Lint: typescript-eslint's strict, type-checked rules over everything tsc checks. Formatting is
// prettier's job (`npm run format:check`), so no layout rules here.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * One `no-restricted-imports` rule per room: the relative imports it must not make, and why. A file
 * takes the last entry whose `files` match it, so an entry for a folder inside a room restates the
 * room's own pattern beside its own.
 */
function rooms(list) {
  return list.map(({ files, forbid }) => ({
    files,
    rules: { 'no-restricted-imports': ['error', { patterns: forbid.map(([regex, message]) => ({ regex, message })) }] },
  }));
}

const roomMessage = (may) => `this room imports ${may} (docs/architecture.md, "Rooms").`;
const faceMessage = 'a folder of the runtime is imported through its face, its index.ts (docs/reconciler.md).';
/**
 * The runtime's folders, each above those it imports: a folder imports only folders before it
 * here. client-go's and controller-runtime's layering: the client at the bottom, the cache on it,
 * the controller on the cache, the reconcile steps on the controller.
 */
const RUNTIME_LAYERS = [
  'queue',
  'client',
  'observability',
  'cache',
  'election',
  'webhooks',
  'controller',
  'children',
  'plan',
  'reconcile',
  'local',
];
const operatorRoom = [
  String.raw`^(\.\./)+(constructs(/(?!contract(/|$)).*)?|command(/.*)?|testing(/.*)?)$`,
  roomMessage('the contract'),
];

export default tseslint.config(
  {
    ignores: [
      'imports/**',
      'dist/**',
      'lib/**',
      'build/**',
      'docs/**',
      'coverage/**',
      'examples/platform-app/**',
      // Compiled and checked by jsii itself, against the packed kit (jsii/build.ts).
      'jsii/src/**',
      '**/*.js',
      '**/*.mjs',
      '**/*.cjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  ...tseslint.configs.stylisticTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-floating-promises': 'error',
      // Numbers and booleans read well in messages; objects and possibly-undefined values do not.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      // `_name` says "deliberately unused" (a field dropped by destructuring, a required parameter).
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      // `interface FooOperatorProps extends OperatorOptions {}`: a public props type of its own, to grow.
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
    },
  },
  // The rooms and the arrows between them (docs/architecture.md): the contract at the bottom; the
  // construct library and the reconciler runtime each on it alone; the test kit on the runtime; the
  // command on all of them. No import runs back up, and the runtime reads the constructs only
  // through the contract, so what runs in the pod needs nothing of the synth side.
  ...rooms([
    {
      files: ['constructs/**/*.ts'],
      forbid: [[String.raw`^(\.\./)+(operator|command|testing)(/|$)`, roomMessage('the contract')]],
    },
    // After the line above, which it overrides for the contract's own files.
    { files: ['constructs/contract/**/*.ts'], forbid: [[String.raw`^\.\./`, roomMessage('only itself')]] },
    { files: ['operator/*.ts'], forbid: [operatorRoom, [String.raw`^\./runtime/[^/]+/`, faceMessage]] },
    // A file in one of the runtime's folders reaches another folder through that folder's face,
    // and only a folder below its own in RUNTIME_LAYERS: no import cycle between them.
    ...RUNTIME_LAYERS.map((room, i) => ({
      files: [`operator/runtime/${room}/**/*.ts`],
      forbid: [
        operatorRoom,
        [String.raw`^\.\./[a-z-]+/`, faceMessage],
        ...(i + 1 < RUNTIME_LAYERS.length
          ? [
              [
                String.raw`^\.\./(${RUNTIME_LAYERS.slice(i + 1).join('|')})$`,
                `runtime/${room}/ imports only the runtime's folders below it (${RUNTIME_LAYERS.slice(0, i).join(', ') || 'none'}): the folders are layered, so no import runs in a cycle (docs/reconciler.md).`,
              ],
            ]
          : []),
      ],
    })),
    {
      files: ['command/**/*.ts'],
      forbid: [
        [String.raw`operator/runtime/[^/]+/`, faceMessage],
        // The packed kit's command installs no logger: the controller's faces load pino (the
        // scaffold test's `init` failed with "Cannot find module 'pino'" through reconcile's face).
        [
          String.raw`operator/runtime/(?!(children|client|local|plan)$)[^/]+$`,
          "the command loads only the runtime's light faces (children, client, local, plan): the others load the controller and its logger, which the packed command does not install.",
        ],
      ],
    },
    {
      // The construct library only through its public face (the upgrade test renders a kind's CRD).
      files: ['testing/**/*.ts'],
      forbid: [
        [
          String.raw`^(\.\./)+(command(/|$)|constructs/(?!contract(/|$)).+)`,
          roomMessage("the runtime, the contract and the construct library's public face (constructs/index.ts)"),
        ],
        [String.raw`operator/runtime/[^/]+/`, faceMessage],
      ],
    },
  ]),
  {
    // Size and complexity gates on product code (pepr's rules, controller-runtime's habits): a
    // function that passes one says why beside it, in the disable comment.
    files: ['constructs/**/*.ts', 'operator/**/*.ts', 'command/**/*.ts', 'testing/**/*.ts', 'reconciler.ts'],
    rules: {
      // A file of one job stays readable top to bottom (issue #53: ~400 lines).
      'max-lines': ['error', { max: 400, skipBlankLines: true, skipComments: true }],
      complexity: ['error', 15],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }],
      'max-statements': ['error', 30],
      'max-params': ['error', 5],
      'max-depth': ['error', 4],
      'max-nested-callbacks': ['error', 4],
    },
  },
  {
    // Tests and benchmarks read what the API server, kubectl and the audit log return (JSON) and
    // let assertions check its shape, so `any` is their honest type there; a `!` after a lookup
    // is an assertion that fails loudly. Everything else holds for them as for the product.
    files: ['test/**/*.ts', 'bench/**/*.ts', 'command/scaffold/files/test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Fakes implement async interfaces without awaiting anything.
      '@typescript-eslint/require-await': 'off',
      // Suites set their fixtures in beforeAll; afterAll guards them (`reconciler?.stop()`)
      // because beforeAll may have failed before setting them, whatever their declared type says.
      '@typescript-eslint/no-unnecessary-condition': 'off',
    },
  },
);
