// Lint: typescript-eslint's strict, type-checked rules over everything tsc checks. Formatting is
// prettier's job (`npm run format:check`), so no layout rules here.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
      '**/*.js',
      '**/*.mjs',
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
  {
    // Tests and benchmarks read what the API server, kubectl and the audit log return (JSON) and
    // let assertions check its shape, so `any` is their honest type there; a `!` after a lookup
    // is an assertion that fails loudly. Everything else holds for them as for the product.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
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
